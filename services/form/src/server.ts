import type { ServiceContext } from '@mailer/kit/service';
import { formV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the form service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(formV1.FormServiceService, {
    describe: async () => ({ service: 'form', protoPackage: formV1.protobufPackage }),
  });
}
