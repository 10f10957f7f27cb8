import './telemetry';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, gracefulHttpClose, natsConnection, onShutdown, startMetricsServer, useServiceIdentity, warnIfUnauthenticated } from '@mailer/kit';
import { ackedPublisher, connectNats, declareJetStream, streamSpecs, type NatsConnection } from '@mailer/nats/client';
import { AccountStore } from './accounts/accounts';
import { createKeyCrypto } from './accounts/api-key';
import { createAdminApp } from './admin/app';
import { resealDkimKeys, resealWebhookSecrets } from './admin/service-reseal';
import { createApp } from './app';
import { answerClientError } from './client-error';
import { createServiceClients } from './clients';
import { readConfig } from './config';
import { AcceptedEventKeys, jetStreamEventSink } from './events/publisher';
import { IdempotencyStore, responseKeyring } from './idempotency/store';
import { BUCKETS } from './kv/buckets';
import { natsJsonKv } from './kv/json-kv';
import { WatchedKv } from './kv/watched-kv';
import { createGatewayMetrics } from './metrics';
import type { LimitState } from './ratelimit/decide';
import { RateLimiter } from './ratelimit/limiter';
import { NATS_ACCESS } from './nats-access';

async function main() {
  const config = readConfig();
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const metrics = createGatewayMetrics();
  let stopping = false;

  warnIfUnauthenticated(logger, config);
  const nc = await connectNats({ ...natsConnection(config), name: 'gateway', log: (msg, extra) => logger.info(extra ?? {}, msg) });
  // Streams and buckets are re-created after every reconnect (a NATS restart loses the memory-stored
  // rate-limit budgets), and the watched copies reloaded; /readyz says no until that is done.
  const streams = streamSpecs({ replicas: config.NATS_REPLICAS });
  const jetStream = await declareJetStream(
    nc,
    {
      streams: NATS_ACCESS.streams.map((s) => streams[s as keyof typeof streams]),
      buckets: Object.values(BUCKETS).map((b) => ({ name: b.name, ttlMs: b.ttlMs, storage: b.storage, history: 1, allowDirect: false, replicas: config.NATS_REPLICAS })),
    },
    { log: (msg, extra) => logger.warn(extra ?? {}, msg) },
  );
  const bucket = (b: { name: string }) => jetStream.kv(b.name);
  // KV writes and event publishes (one or two per request) share one acknowledged publisher.
  const publisher = ackedPublisher(nc);
  const kv = (b: { name: string }) => natsJsonKv(bucket(b), b.name, publisher, jetStream.guard);

  // Watched copies keep two KV round trips off every request (see src/kv/watched-kv.ts).
  const onWatchError = (err: unknown) => logger.warn({ err }, 'watched KV copy: falling back to direct reads');
  const accountsBucket = bucket(BUCKETS.accounts);
  const accountsView =
    config.GATEWAY_ACCOUNT_LEASE_MS > 0 ? await WatchedKv.open<unknown>(accountsBucket, { key: '>', leaseMs: config.GATEWAY_ACCOUNT_LEASE_MS, onError: onWatchError }) : undefined;
  const rateLimitsBucket = bucket(BUCKETS.rateLimits);
  // The failure budgets only (`address.<address>`): readers' public-page budgets (`address.<address>.public`)
  // are never peeked, and watching them would echo every forwarded page's write back to each replica.
  const addressBudgets = await WatchedKv.open<LimitState>(rateLimitsBucket, { key: 'address.*', onError: onWatchError });
  jetStream.onRestored(async () => {
    limiter.forgetCache();
    await Promise.all([accountsView?.restart(), addressBudgets.restart()]);
  });
  const limiter = new RateLimiter(kv(BUCKETS.rateLimits), Date.now, undefined, addressBudgets);
  const pruning = setInterval(() => limiter.pruneView(), 60_000).unref();

  const accounts = new AccountStore(kv(BUCKETS.accounts), createKeyCrypto(config.API_KEY_MASTER_KEY, config.API_KEY_MASTER_KEY_PREVIOUS), undefined, accountsView, kv(BUCKETS.accountNames));
  // Accounts created before the names bucket existed get their name there once; pages lack it until then.
  accounts.publishMissingNames().then(
    (written) => written > 0 && logger.info({ accounts: written }, 'account names published for reader pages'),
    (err) => logger.warn({ err }, 'account names not published; retried at the next start'),
  );
  // Every call to a service carries the gateway's signed service token (INTERNAL_GRPC_SECRET).
  useServiceIdentity('gateway', config.INTERNAL_GRPC_SECRET);
  const clients = createServiceClients(config);
  const app = createApp({
    logger,
    metrics,
    accounts,
    limiter,
    idempotency: new IdempotencyStore(kv(BUCKETS.idempotency), responseKeyring(config.API_KEY_MASTER_KEY, config.API_KEY_MASTER_KEY_PREVIOUS)),
    events: { sink: jetStreamEventSink(nc, publisher, jetStream.guard), acceptedKeys: new AcceptedEventKeys(kv(BUCKETS.eventKeys)) },
    clients,
    readiness: {
      nats: async () => jetStream.ready() && (await natsAnswers(nc)),
      subscriber: clients.subscriberServing,
      stopping: () => stopping,
    },
    trustProxy: config.GATEWAY_TRUST_PROXY,
    hstsMaxAgeSeconds: config.GATEWAY_HSTS_MAX_AGE_SECONDS,
    unauthenticatedPerMinute: config.GATEWAY_UNAUTHENTICATED_PER_MINUTE,
    publicWeb: {
      upstreams: { MESSAGING_HTTP_ADDR: config.MESSAGING_HTTP_ADDR, FORM_HTTP_ADDR: config.FORM_HTTP_ADDR },
      perMinute: config.GATEWAY_PUBLIC_PER_MINUTE,
    },
  });
  const admin = createAdminApp({ accounts, adminToken: config.ADMIN_TOKEN, logger, resealWebhookSecrets: () => resealWebhookSecrets(config), resealDkimKeys: () => resealDkimKeys(config) });

  const server = await listen(app, config.GATEWAY_PORT, config.GATEWAY_HOST);
  // Installed before any request is served: a graceful close must know every request in flight.
  const closeServer = gracefulHttpClose(server);
  server.on('clientError', answerClientError);
  // Behind a load balancer, idle keep-alive connections must outlive the balancer's own timeout.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const adminServer = await listen(admin, config.ADMIN_PORT, config.ADMIN_HOST);
  const closeAdminServer = gracefulHttpClose(adminServer);
  const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.METRICS_HOST);
  const closeMetricsServer = gracefulHttpClose(metricsServer);

  logger.info(
    { port: (server.address() as AddressInfo).port, adminPort: (adminServer.address() as AddressInfo).port, metricsPort: metricsServer.port },
    'ready',
  );

  const grace = config.GATEWAY_SHUTDOWN_GRACE_MS;
  const delay = config.SHUTDOWN_DELAY_MS;
  onShutdown(
    logger,
    [
      async () => {
        stopping = true; // /readyz: 503
      },
      // All listeners at once: none waits for another's slow clients. Each keeps accepting for the
      // delay (answers say Connection: close), then drains for at most the grace.
      () => Promise.all([closeServer(grace, delay), closeAdminServer(grace, delay), closeMetricsServer(grace, delay)]),
      async () => {
        clearInterval(pruning);
        jetStream.close();
        accountsView?.close();
        addressBudgets.close();
      },
      () => nc.drain(),
      async () => clients.close(),
    ],
    // Room for the NATS drain after the grace; inside the chart's terminationGracePeriodSeconds.
    delay + grace + 3_000,
  );
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

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
