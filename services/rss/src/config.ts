import { commonConfig, loadConfig, serviceAddressDefaults, storeConfig, z } from '@mailer/kit';
import { outboundConfig } from '@mailer/outbound';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  ...serviceAddressDefaults('rss'),
  // The outbound URL guard's exceptions (API.md section 4): every feed fetch goes through @mailer/outbound.
  ...outboundConfig,
  /** How often each ACTIVE newsletter's feed is polled (API.md "RSS newsletters"; tests shorten it). */
  RSS_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
});
export type Config = z.infer<typeof configSchema>;

export const loadRssConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
