import { commonConfig, loadConfig, serviceAddressDefaults, storeConfig, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  ...serviceAddressDefaults('messaging'),
});
export type Config = z.infer<typeof configSchema>;

export const loadMessagingConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
