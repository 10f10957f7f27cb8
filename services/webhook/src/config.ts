import { commonConfig, loadConfig, masterKey, peerAddressDefaults, previousMasterKeys, retentionDays, storeConfig, z } from '@mailer/kit';
import { outboundConfig } from '@mailer/outbound';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  /** Days a webhook delivery and its attempts are kept after the delivery was created. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: retentionDays(30),
  ...peerAddressDefaults('webhook'),
  // The outbound URL guard's exceptions (docs/configuration.md): deliveries go through @mailer/outbound.
  ...outboundConfig,
  /** Seals the subscriptions' signing secrets at rest (a key derived from it). */
  SECRET_SEALING_KEY: masterKey,
  /** Former sealing keys (comma list): what they sealed still opens, and is re-sealed on use, at start or by `reseal-secrets`. */
  SECRET_SEALING_KEY_PREVIOUS: previousMasterKeys,
  // Deliveries (i14-deliver): see docs/integrators.md "Webhooks".
  /** Attempts of one subscription in flight at once: a slow or dead target holds at most this many. */
  WEBHOOK_SUBSCRIPTION_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(8),
  /** Attempts in flight in all (this replica). */
  WEBHOOK_DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(256),
  /** Waits before the retries of a failed delivery, in seconds, each with ±20 % jitter (the API contract: about 3 days in all). Tests shorten it. */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default('5,300,1800,7200,18000,36000,36000,50400,72000,86400')
    .transform((v, ctx) => {
      const delays = v.split(',').map((s) => Number(s.trim()));
      if (delays.length === 0 || delays.some((d) => !Number.isFinite(d) || d < 0)) {
        ctx.addIssue({ code: 'custom', message: 'WEBHOOK_RETRY_SCHEDULE_SECONDS must be a comma list of seconds >= 0, e.g. 5,300,1800' });
        return z.NEVER;
      }
      return delays.map((d) => d * 1000);
    }),
  /** How long an attempt's claim holds (above the 15 s timeout): after a crash mid-attempt, the delivery is tried again after it. */
  WEBHOOK_ATTEMPT_CLAIM_SECONDS: z.coerce.number().int().min(16).max(3600).default(30),
  /** How often the store is scanned for due deliveries (retries, and what a busy subscription left). */
  WEBHOOK_SCAN_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
});
export type Config = z.infer<typeof configSchema>;

export const loadWebhookConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
