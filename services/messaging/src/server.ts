import type { ServiceContext } from '@mailer/kit/service';
import { messagingV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the messaging service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
}
