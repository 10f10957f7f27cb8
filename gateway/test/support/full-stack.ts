import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, SERVICES, spawnReady, type RunningProcess, type ServiceName } from '@mailer/testing';
import { startGateway, startStack, type GatewayHandle, type Stack } from './harness';

/**
 * Every service as a real process, each knowing every other's address (as in a deployment), and a
 * gateway in front of all of them, reader pages included. Mail stays queued (sending paused). A
 * service that is not built fails the start with the command to run (spawnReady).
 */
export interface FullStack {
  stack: Stack;
  gw: GatewayHandle;
  services: Record<ServiceName, RunningProcess>;
  stop(): Promise<void>;
}

export async function startFullStack(gatewayEnv: NodeJS.ProcessEnv = {}): Promise<FullStack> {
  const stack = await startStack(0);
  const address = async () => `127.0.0.1:${await freePort()}`;
  const peers: Record<string, string> = {};
  for (const name of SERVICES) peers[`${name.toUpperCase()}_GRPC_ADDR`] = await address();
  const http = { FORM_HTTP_ADDR: await address(), MESSAGING_HTTP_ADDR: await address() };
  const secrets = { TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), SECRET_SEALING_KEY: crypto.randomBytes(32).toString('base64') };
  const own: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {
    form: { FORM_HTTP_ADDR: http.FORM_HTTP_ADDR, PUBLIC_BASE_URL: 'https://mail.fuzz.test' },
    messaging: { MESSAGING_HTTP_ADDR: http.MESSAGING_HTTP_ADDR, BOUNCE_SMTP_PORT: String(await freePort()), PUBLIC_BASE_URL: 'https://mail.fuzz.test', MAIL_SEND_PAUSED: 'true' },
  };
  const dirs: string[] = [];
  const started: RunningProcess[] = [];
  const services = {} as Record<ServiceName, RunningProcess>;
  try {
    for (const name of SERVICES) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `mailer-${name}-`));
      dirs.push(dataDir);
      services[name] = await spawnReady(`services/${name}/dist/main.js`, { LOG_LEVEL: 'info', METRICS_PORT: '0', NATS_URL: stack.nats.url, DATA_DIR: dataDir, ...peers, ...secrets, ...own[name] });
      started.push(services[name]);
    }
    const gw = await startGateway({ NATS_URL: stack.nats.url, ...peers, ...http, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '1000000', ...gatewayEnv });
    return {
      stack,
      gw,
      services,
      async stop() {
        await gw.stop();
        for (const p of started.reverse()) await p.stop();
        await stack.stop();
        for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of started.reverse()) await p.stop();
    await stack.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    throw err;
  }
}
