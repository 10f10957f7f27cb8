import { commonConfig, loadConfig, serviceAddressDefaults, storeConfig, z } from '@mailer/kit';
import { outboundConfig } from '@mailer/outbound';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  ...serviceAddressDefaults('webhook'),
  // The outbound URL guard's exceptions (API.md section 4): deliveries go through @mailer/outbound.
  ...outboundConfig,
});
export type Config = z.infer<typeof configSchema>;

export const loadWebhookConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
