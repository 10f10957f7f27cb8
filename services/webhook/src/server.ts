import type { ServiceRuntime } from '@mailer/kit/service';
import { webhookV1 } from '@mailer/proto';
import type { Config } from './config';
import { webhookHandlers } from './handlers/describe';

/** Registers the webhook service's handlers. Its subscriptions and deliveries arrive in a later issue. */
export async function setup(ctx: ServiceRuntime<Config>): Promise<void> {
  ctx.grpc.add(webhookV1.WebhookServiceService, webhookHandlers());
}
