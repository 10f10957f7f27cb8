// mailer.webhook.v1.WebhookService: Describe, and the operator's re-sealing of every signing secret.
import type { AsyncHandlers } from '@mailer/kit';
import { webhookV1 } from '@mailer/proto';
import { resealSecrets, type SubscriptionDeps } from '../app/subscriptions';

export function webhookHandlers(deps: Pick<SubscriptionDeps, 'subscriptions'>): AsyncHandlers<webhookV1.WebhookServiceServer> {
  return {
    describe: async () => ({ service: 'webhook', protoPackage: webhookV1.protobufPackage }),
    resealSecrets: () => resealSecrets(deps),
  };
}
