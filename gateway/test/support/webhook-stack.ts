import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminRequest, startService, type RunningService } from '@mailer/testing';
import { createAccount, startGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { api, type Api } from './subscriber-stack';

/**
 * Webhooks end to end: a real nats-server, the real webhook service process and a real gateway
 * pointing at it. `webhookEnv` sets the service's settings (e.g. the outbound guard's).
 */
export interface WebhookStack {
  stack: Stack;
  webhook: RunningService;
  gw: GatewayHandle;
  account(name: string): Promise<Api>;
  stop(): Promise<void>;
}

export async function startWebhookStack(opts: { webhookEnv?: NodeJS.ProcessEnv } = {}): Promise<WebhookStack> {
  const stack = await startStack(0);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-webhook-'));
  let webhook: RunningService | undefined;
  try {
    // startService picks free ports (and tries again if one is taken before the service binds it).
    webhook = await startService('webhook', { NATS_URL: stack.nats.url, DATA_DIR: dataDir, ...opts.webhookEnv });
    const gw = await startGateway({ NATS_URL: stack.nats.url, WEBHOOK_GRPC_ADDR: webhook.address, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
    const running = webhook;
    return {
      stack,
      webhook: running,
      gw,
      async account(name) {
        const { accountId, apiKey } = await createAccount(gw, name);
        await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
        return api(gw, apiKey, accountId);
      },
      async stop() {
        await gw.stop();
        await running.stop();
        await stack.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await webhook?.stop();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
