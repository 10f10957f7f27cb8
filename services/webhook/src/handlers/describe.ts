// mailer.webhook.v1.WebhookService: only Describe until the webhook issue fills the service.
import type { AsyncHandlers } from '@mailer/kit';
import { webhookV1 } from '@mailer/proto';

export function webhookHandlers(): AsyncHandlers<webhookV1.WebhookServiceServer> {
  return {
    describe: async () => ({ service: 'webhook', protoPackage: webhookV1.protobufPackage }),
  };
}
