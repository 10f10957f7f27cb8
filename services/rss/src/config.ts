import { commonConfig, loadConfig, peerAddressDefaults, storeConfig, z } from '@mailer/kit';
import { outboundConfig } from '@mailer/outbound';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  ...peerAddressDefaults('rss'),
  // The outbound URL guard's exceptions (docs/configuration.md): every feed fetch goes through @mailer/outbound.
  ...outboundConfig,
  /** How often each ACTIVE newsletter's feed is polled (the API contract "RSS newsletters"; tests shorten it). */
  RSS_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /** Feeds read at once by this process's poller. */
  RSS_POLL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Recipients per page of an issue's mail: one messaging call, one store transaction, one stored cursor. */
  RSS_SEND_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(500),
  /** How long an issue's send is held by the replica sending it without progress: after a crash it resumes this much later. */
  RSS_SEND_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** After a try to queue an issue's mail fails, the send is tried again this much later. */
  RSS_SEND_RETRY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * Failed tries in a row (for a reason other than a service not answering) after which an issue is
   * FAILED with lastError, counted in mailer_rss_issues_failed_total; a release sends it again.
   */
  RSS_SEND_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
});
export type Config = z.infer<typeof configSchema>;

export const loadRssConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
