import { commonConfig, hostPort, loadConfig, storeConfig, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  MESSAGING_GRPC_ADDR: hostPort.default('127.0.0.1:7055'),
});
export type Config = z.infer<typeof configSchema>;

export const loadMessagingConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
