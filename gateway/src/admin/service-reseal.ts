import { createClient, peerClient } from '@mailer/kit';
import { messagingV1, webhookV1 } from '@mailer/proto';
import { servicePeer } from '../clients';
import type { GatewayConfig } from '../config';

/** How long a service may take to re-seal what it keeps sealed (a scan of all its records). */
const RESEAL_DEADLINE_MS = 10 * 60_000;

/**
 * The operator's `reseal-secrets` on the services that keep secrets sealed under SECRET_SEALING_KEY
 * (admin listener only): a client of its own per call, with a deadline fit for a scan of every
 * record, closed after the call.
 */
async function resealWith<C extends { resealSecrets(req: object): Promise<R>; close(): void }, R>(client: C): Promise<R> {
  try {
    return await client.resealSecrets({});
  } finally {
    client.close();
  }
}

/** The webhook service: every subscription's signing secrets. */
export const resealWebhookSecrets = (config: Pick<GatewayConfig, 'WEBHOOK_GRPC_ADDR'>): Promise<webhookV1.ResealSecretsResponse> =>
  resealWith(peerClient(createClient(webhookV1.WebhookServiceClient, config.WEBHOOK_GRPC_ADDR, RESEAL_DEADLINE_MS), servicePeer('webhook')));

/** The messaging service: every sending domain's DKIM private key. */
export const resealDkimKeys = (config: Pick<GatewayConfig, 'MESSAGING_GRPC_ADDR'>): Promise<messagingV1.ResealSecretsResponse> =>
  resealWith(peerClient(createClient(messagingV1.MessagingServiceClient, config.MESSAGING_GRPC_ADDR, RESEAL_DEADLINE_MS), servicePeer('messaging')));
