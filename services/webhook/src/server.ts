import type { ServiceContext } from '@mailer/kit/service';
import { webhookV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the webhook service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(webhookV1.WebhookServiceService, {
    describe: async () => ({ service: 'webhook', protoPackage: webhookV1.protobufPackage }),
  });
}
