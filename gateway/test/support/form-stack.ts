import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminRequest, freePort, spawnReady, type RunningProcess } from '@mailer/testing';
import { createAccount, startGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { api, startUsageSources, type Api, type UsageSources } from './subscriber-stack';

/**
 * The signup forms domain end to end: a real nats-server, the real subscriber, form and messaging
 * service processes (each knowing the others' addresses: the form service checks fields, topics,
 * sender profiles and templates; the subscriber service asks it for field usages; messaging asks it
 * which forms name a profile or template) and a real gateway. The segment and rss services, which the
 * subscriber service also asks for field usages, are in-process doubles that report none.
 */
export interface FormStack {
  stack: Stack;
  usage: UsageSources;
  subscriber: RunningProcess;
  form: RunningProcess;
  messaging: RunningProcess;
  gw: GatewayHandle;
  /** The form service's public HTTP listener (host:port). */
  formHttpAddr: string;
  /** The form service's gRPC address (host:port), for calls the messaging service makes. */
  formGrpcAddr: string;
  publicBaseUrl: string;
  account(name: string): Promise<Api>;
  /** kill -9 of the form service, then a new process on the same data, ports and settings (`form` is the new one). */
  restartFormAfterKill9(): Promise<void>;
  /** SIGTERM of the messaging service, then a new process on the same data and ports with `env` changed (`messaging` is the new one). */
  restartMessaging(env: NodeJS.ProcessEnv): Promise<void>;
  stop(): Promise<void>;
}

/** `webhook`: a webhook service too (the gateway's `reseal-secrets` asks it). */
export async function startFormStack(opts: { publicBaseUrl?: string; formEnv?: NodeJS.ProcessEnv; gatewayEnv?: NodeJS.ProcessEnv; messagingEnv?: NodeJS.ProcessEnv; webhook?: boolean } = {}): Promise<FormStack> {
  const stack = await startStack(0);
  const usage = await startUsageSources();
  const dirs: string[] = [];
  const started: RunningProcess[] = [];
  const addr = async () => `127.0.0.1:${await freePort()}`;
  const [subscriberAddr, formAddr, messagingAddr, formHttpAddr, messagingHttpAddr] = [await addr(), await addr(), await addr(), await addr(), await addr()];
  const peers = { SUBSCRIBER_GRPC_ADDR: subscriberAddr, FORM_GRPC_ADDR: formAddr, MESSAGING_GRPC_ADDR: messagingAddr };
  const envOf = new Map<RunningProcess, NodeJS.ProcessEnv>();
  const spawn = async (name: string, env: NodeJS.ProcessEnv, reuseDataDir?: string) => {
    const dataDir = reuseDataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `mailer-${name}-`));
    if (!reuseDataDir) dirs.push(dataDir);
    const full = { LOG_LEVEL: 'info', METRICS_PORT: '0', NATS_URL: stack.nats.url, DATA_DIR: dataDir, ...peers, ...env };
    const proc = await spawnReady(`services/${name}/dist/main.js`, full);
    started.push(proc);
    envOf.set(proc, full);
    return proc;
  };
  const publicBaseUrl = opts.publicBaseUrl ?? 'https://mail.forms.test';
  try {
    const subscriber = await spawn('subscriber', { SEGMENT_GRPC_ADDR: usage.addresses.segment, RSS_GRPC_ADDR: usage.addresses.rss });
    const form = await spawn('form', {
      FORM_HTTP_ADDR: formHttpAddr,
      PUBLIC_BASE_URL: publicBaseUrl,
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
      ...opts.formEnv,
    });
    // Messaging asks the rss service which newsletters send from a profile before deleting it.
    const rssAddr = await addr();
    await spawn('rss', { RSS_GRPC_ADDR: rssAddr });
    const messaging = await spawn('messaging', {
      RSS_GRPC_ADDR: rssAddr,
      MESSAGING_HTTP_ADDR: messagingHttpAddr,
      BOUNCE_SMTP_PORT: String(await freePort()),
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
      PUBLIC_BASE_URL: publicBaseUrl,
      MAIL_SEND_PAUSED: 'true',
      // e.g. a capture relay as SMTP_URL with MAIL_SEND_PAUSED 'false', to read the mail sent
      ...opts.messagingEnv,
    });
    const webhookAddr = opts.webhook ? await addr() : undefined;
    if (webhookAddr) await spawn('webhook', { WEBHOOK_GRPC_ADDR: webhookAddr, SECRET_SEALING_KEY: crypto.randomBytes(32).toString('base64') });
    const gw = await startGateway({
      NATS_URL: stack.nats.url,
      ...peers,
      ...(webhookAddr ? { WEBHOOK_GRPC_ADDR: webhookAddr } : {}),
      FORM_HTTP_ADDR: formHttpAddr,
      MESSAGING_HTTP_ADDR: messagingHttpAddr,
      GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
      ...opts.gatewayEnv,
    });
    return {
      stack,
      usage,
      subscriber,
      form,
      messaging,
      gw,
      formHttpAddr,
      formGrpcAddr: formAddr,
      publicBaseUrl,
      async account(name) {
        const { accountId, apiKey } = await createAccount(gw, name);
        await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
        return api(gw, apiKey, accountId);
      },
      async restartFormAfterKill9() {
        const old = this.form;
        const env = envOf.get(old)!;
        await old.kill9();
        started.splice(started.indexOf(old), 1);
        this.form = await spawn('form', env, env.DATA_DIR);
      },
      async restartMessaging(changes) {
        const old = this.messaging;
        const env = { ...envOf.get(old)!, ...changes };
        await old.stop();
        started.splice(started.indexOf(old), 1);
        this.messaging = await spawn('messaging', env, env.DATA_DIR);
      },
      async stop() {
        await gw.stop();
        for (const p of started.reverse()) await p.stop();
        await usage.close();
        await stack.stop();
        for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of started.reverse()) await p.stop();
    await usage.close();
    await stack.stop();
    throw err;
  }
}
