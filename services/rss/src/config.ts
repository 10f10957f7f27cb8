import { commonConfig, hostPort, loadConfig, storeConfig, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  RSS_GRPC_ADDR: hostPort.default('127.0.0.1:7054'),
});
export type Config = z.infer<typeof configSchema>;

export const loadRssConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
