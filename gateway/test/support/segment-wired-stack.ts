import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { adminRequest, freePort, spawnReady, startService, type RunningService } from '@mailer/testing';
import { createAccount, startGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { api, startUsageSources, type Api, type UsageSources } from './subscriber-stack';

/**
 * The subscriber and segment services wired to each other as in a deployment: the subscriber service
 * asks the real segment service for segment members (ListSegmentMembers) and for its field usages
 * (FieldUsageService), the segment service reads the subscriber service's catalog and projects its
 * DOMAIN events; a real gateway in front. Form, rss and messaging (the other usage sources) are
 * in-process doubles that report nothing unless a test says so.
 *
 * The two services need each other's address at start: the subscriber service's port is chosen
 * first, the segment service starts pointed at it (its client connects lazily), then the subscriber
 * service starts on that port.
 */
export interface WiredStack {
  stack: Stack;
  subscriber: RunningService;
  segment: RunningService;
  gw: GatewayHandle;
  usage: UsageSources;
  account(name: string): Promise<Api>;
  stop(): Promise<void>;
}

/** `serviceEnv` goes to both services (e.g. LOG_LEVEL: 'debug' to see every call's outcome line). */
export async function startWiredStack(serviceEnv: NodeJS.ProcessEnv = {}): Promise<WiredStack> {
  const stack = await startStack(0);
  const usage = await startUsageSources();
  const subscriberAddress = `127.0.0.1:${await freePort()}`;
  const segment = await startService('segment', {
    ...serviceEnv,
    NATS_URL: stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: subscriberAddress,
    RSS_GRPC_ADDR: usage.addresses.rss,
    MESSAGING_GRPC_ADDR: usage.addresses.messaging,
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-subscriber-'));
  const proc = await spawnReady('services/subscriber/dist/main.js', {
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    ...serviceEnv,
    NATS_URL: stack.nats.url,
    DATA_DIR: dataDir,
    SUBSCRIBER_GRPC_ADDR: subscriberAddress,
    SEGMENT_GRPC_ADDR: segment.address,
    FORM_GRPC_ADDR: usage.addresses.form,
    RSS_GRPC_ADDR: usage.addresses.rss,
    MESSAGING_GRPC_ADDR: usage.addresses.messaging,
  });
  const subscriber: RunningService = { ...proc, name: 'subscriber', address: subscriberAddress, dataDir };
  const gw = await startGateway({
    NATS_URL: stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    SEGMENT_GRPC_ADDR: segment.address,
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
  });
  return {
    stack,
    subscriber,
    segment,
    gw,
    usage,
    async account(name) {
      const { accountId, apiKey } = await createAccount(gw, name);
      await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
      return api(gw, apiKey, accountId);
    },
    async stop() {
      await gw.stop();
      await subscriber.stop();
      await segment.stop();
      await usage.close();
      await stack.stop();
    },
  };
}
