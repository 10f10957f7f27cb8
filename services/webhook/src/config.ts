import { commonConfig, hostPort, loadConfig, storeConfig, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  WEBHOOK_GRPC_ADDR: hostPort.default('127.0.0.1:7056'),
});
export type Config = z.infer<typeof configSchema>;

export const loadWebhookConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
