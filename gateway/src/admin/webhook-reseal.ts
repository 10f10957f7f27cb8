import { createClient, peerClient } from '@mailer/kit';
import { webhookV1 } from '@mailer/proto';
import { servicePeer } from '../clients';
import type { GatewayConfig } from '../config';

/** How long the webhook service may take to re-seal every signing secret (a scan of all subscriptions). */
const RESEAL_DEADLINE_MS = 10 * 60_000;

/**
 * The operator's `reseal-secrets` on the webhook service (admin listener only): a client of its own,
 * with a deadline fit for a scan of every subscription, closed after the call.
 */
export async function resealWebhookSecrets(config: Pick<GatewayConfig, 'WEBHOOK_GRPC_ADDR'>): Promise<webhookV1.ResealSecretsResponse> {
  const client = peerClient(createClient(webhookV1.WebhookServiceClient, config.WEBHOOK_GRPC_ADDR, RESEAL_DEADLINE_MS), servicePeer('webhook'));
  try {
    return await client.resealSecrets({});
  } finally {
    client.close();
  }
}
