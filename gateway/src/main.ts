import './telemetry';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, onShutdown, startMetricsServer } from '@mailer/kit';
import { connectNats, ensureStreams, openKv, STREAMS, type NatsConnection } from '@mailer/nats';
import { AccountStore } from './accounts/accounts';
import { createKeyCrypto } from './accounts/api-key';
import { createAdminApp } from './admin/app';
import { createApp } from './app';
import { answerClientError } from './client-error';
import { createServiceClients } from './clients';
import { readConfig } from './config';
import { AcceptedEventKeys, jetStreamEventSink } from './events/publisher';
import { IdempotencyStore } from './idempotency/store';
import { BUCKETS } from './kv/buckets';
import { natsJsonKv } from './kv/json-kv';
import { WatchedKv } from './kv/watched-kv';
import { createGatewayMetrics } from './metrics';
import type { LimitState } from './ratelimit/decide';
import { RateLimiter } from './ratelimit/limiter';

async function main() {
  const config = readConfig();
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const metrics = createGatewayMetrics();

  const nc = await connectNats({ url: config.NATS_URL, name: 'gateway', log: (msg, extra) => logger.info(extra ?? {}, msg) });
  await ensureStreams(nc, [STREAMS.EVENTS]);
  const bucket = (b: { name: string; ttlMs: number; storage: 'file' | 'memory' }) =>
    openKv(nc, b.name, { ttlMs: b.ttlMs, storage: b.storage, history: 1, allowDirect: false });
  const kv = async (b: { name: string; ttlMs: number; storage: 'file' | 'memory' }) => natsJsonKv(await bucket(b), b.name);

  // Watched copies keep two KV round trips off every request (see src/kv/watched-kv.ts).
  const onWatchError = (err: unknown) => logger.warn({ err }, 'watched KV copy: falling back to direct reads');
  const accountsBucket = await bucket(BUCKETS.accounts);
  const accountsView =
    config.GATEWAY_ACCOUNT_LEASE_MS > 0 ? await WatchedKv.open<unknown>(accountsBucket, { key: '>', leaseMs: config.GATEWAY_ACCOUNT_LEASE_MS, onError: onWatchError }) : undefined;
  const rateLimitsBucket = await bucket(BUCKETS.rateLimits);
  const addressBudgets = await WatchedKv.open<LimitState>(rateLimitsBucket, { key: 'address.>', onError: onWatchError });
  const limiter = new RateLimiter(natsJsonKv(rateLimitsBucket, BUCKETS.rateLimits.name), Date.now, undefined, addressBudgets);
  const pruning = setInterval(() => limiter.pruneView(), 60_000).unref();

  const accounts = new AccountStore(natsJsonKv(accountsBucket, BUCKETS.accounts.name), createKeyCrypto(config.API_KEY_MASTER_KEY), undefined, accountsView);
  const clients = createServiceClients(config);
  const app = createApp({
    logger,
    metrics,
    accounts,
    limiter,
    idempotency: new IdempotencyStore(await kv(BUCKETS.idempotency)),
    events: { sink: jetStreamEventSink(nc), acceptedKeys: new AcceptedEventKeys(await kv(BUCKETS.eventKeys)) },
    clients,
    readiness: {
      nats: () => natsAnswers(nc),
      subscriber: clients.subscriberServing,
    },
    trustProxy: config.GATEWAY_TRUST_PROXY,
    unauthenticatedPerMinute: config.GATEWAY_UNAUTHENTICATED_PER_MINUTE,
  });
  const admin = createAdminApp({ accounts, adminToken: config.ADMIN_TOKEN, logger });

  const server = await listen(app, config.GATEWAY_PORT, config.GATEWAY_HOST);
  server.on('clientError', answerClientError);
  // Behind a load balancer, idle keep-alive connections must outlive the balancer's own timeout.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const adminServer = await listen(admin, config.ADMIN_PORT, config.ADMIN_HOST);
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.METRICS_HOST);

  logger.info(
    { port: (server.address() as AddressInfo).port, adminPort: (adminServer.address() as AddressInfo).port, metricsPort: metricsServer.port },
    'ready',
  );

  onShutdown(logger, [
    () => close(server),
    () => close(adminServer),
    async () => {
      clearInterval(pruning);
      accountsView?.close();
      addressBudgets.close();
    },
    () => nc.drain(),
    async () => clients.close(),
    () => close(metricsServer),
  ]);
}

/** NATS is connected and answers a ping within a second (a reconnecting client would just wait). */
async function natsAnswers(nc: NatsConnection): Promise<boolean> {
  if (nc.isClosed()) return false;
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000).unref());
  return Promise.race([nc.rtt().then(() => true, () => false), timeout]);
}

function listen(app: http.RequestListener, port: number, host: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
