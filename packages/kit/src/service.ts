// The process runtime of gRPC services (store + NATS + gRPC). A subpath of its own
// (`@mailer/kit/service`) so the gateway, which has no store, does not load mongoose.

import path from 'node:path';
import type { JetStreamClient, NatsConnection } from 'nats';
import { openStore, type Store } from '@mailer/store';
import { connectNats, declareJetStream, streamSpecs, startOutboxRelay, type NatsAccess } from '@mailer/nats';
import type { ServiceName } from './addresses';
import { natsConnection, warnIfUnauthenticated, type NatsSettings } from './config';
import { useServiceIdentity } from './service-token';
import { randomIds, systemClock, type Clock, type IdSource } from './clock';
import { createLogger, type Logger } from './logger';
import { createMetrics, startMetricsServer, type Metrics } from './metrics';
import { createGrpcServer, type GrpcServer } from './grpc-server';
import { startHttpListener, type HttpListener, type HttpListenerOptions } from './http-listener';
import { gracefulHttpClose, onShutdown, watchHealth } from './lifecycle';
import { instrumentStore } from './store-metrics';
import { ownerOnlyFiles } from './file-modes';
import { SHUTDOWN_DRAIN_MS, SHUTDOWN_EXIT_MS } from './time-limits';
import { exportConsumerMetrics, exportOutboxMetrics } from './backlog-metrics';

/**
 * What every gRPC service process is given once its store, NATS and server exist. Use cases take
 * the parts they need (`Pick<ServiceRuntime<C>, 'store' | 'now' | 'newId'>`), so a unit test passes
 * a fixed clock and predictable ids (fixedClock, sequentialIds) instead.
 */
export interface ServiceRuntime<C> extends Clock, IdSource {
  name: string;
  config: C;
  logger: Logger;
  metrics: Metrics;
  store: Store;
  nc: NatsConnection;
  js: JetStreamClient;
  grpc: GrpcServer;
  /** Wakes the outbox relay after a write that recorded events (it also polls). */
  notifyOutbox(): void;
  /**
   * Waits (at most timeoutMs) until the outbox documents committed so far are published to JetStream;
   * false on timeout. The relay's wait, under the one name the outbox wait has everywhere. Writes that
   * promise read-after-write to other services call it before answering.
   */
  awaitPublished(timeoutMs: number): Promise<boolean>;
  /**
   * Runs a NATS request a caller waits for (e.g. reading a stream's position) only while NATS is up:
   * it fails at once while NATS is away, or when the connection drops during it, instead of after
   * the client's 5 s request timeout (DeclaredJetStream.guard).
   */
  natsGuard<T>(op: () => Promise<T>): Promise<T>;
  /**
   * Registers the service's reader-facing HTTP listener (http-listener.ts: an Express app on
   * `<SVC>_HTTP_ADDR`, which the gateway forwards public prefixes to). Started with the gRPC server
   * once `setup` returns, closed gracefully first on shutdown. At most one per process.
   */
  serveHttp(options: Pick<HttpListenerOptions, 'address' | 'app' | 'contentSecurityPolicy'>): void;
}

export interface ServiceConfig extends NatsSettings {
  METRICS_PORT: number;
  METRICS_HOST?: string;
  LOG_LEVEL: string;
  INTERNAL_GRPC_SECRET?: string;
  MONGODB_URI?: string;
  MONGODB_DATABASE?: string;
  DATA_DIR: string;
  STORE_FSYNC: boolean;
  SHUTDOWN_DELAY_MS: number;
}

/**
 * Starts a service process: metrics, store, NATS (streams declared), outbox relay, gRPC server
 * with health, then `setup` registers the service's handlers (and starts its consumers, returning
 * their stop functions). Health turns SERVING once listening and follows store and NATS after.
 * SIGTERM: NOT_SERVING, SHUTDOWN_DELAY_MS still serving, drain gRPC, stop consumers and relay, drain
 * NATS, close the store.
 */
export async function runService<C extends ServiceConfig>(opts: {
  name: ServiceName;
  config: C;
  /** What the service does on NATS (its src/nats-access.ts): the streams declared here come from it. */
  nats: NatsAccess;
  grpcAddress: string;
  setup: (ctx: ServiceRuntime<C>) => Promise<Array<() => Promise<unknown>> | void>;
  /** Outbox relay tuning (see startOutboxRelay); defaults suit services that emit few events. */
  outbox?: { batchSize?: number; retainPublishedMs?: number };
}): Promise<void> {
  const { name, config } = opts;
  const logger = createLogger(name, config.LOG_LEVEL);
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  // Before anything writes a file: data directories 0700, files 0600.
  ownerOnlyFiles(config.DATA_DIR, path.join(config.DATA_DIR, name), (extra, msg) => logger.warn(extra, msg));
  try {
    const metrics = createMetrics(name);
    const metricsServer = await startMetricsServer(metrics.registry, config.METRICS_PORT, config.METRICS_HOST);
    const closeMetricsServer = gracefulHttpClose(metricsServer);
    const rawStore = await openStore({
      mongodbUri: config.MONGODB_URI ? withDatabase(config.MONGODB_URI, config.MONGODB_DATABASE ?? `mailer_${name}`) : undefined,
      dataDir: path.join(config.DATA_DIR, name),
      fsync: config.STORE_FSYNC,
      log: (message, fields) => logger.info(fields, message),
    });
    const store = instrumentStore(rawStore, metrics.registry);
    warnIfUnauthenticated(logger, config);
    const nc = await connectNats({ ...natsConnection(config), name, log: (msg, extra) => logger.info(extra ?? {}, msg) });
    // Re-ensured after every reconnect, so a NATS server that lost them (restart without its store) heals.
    const specs = streamSpecs({ replicas: config.NATS_REPLICAS });
    const streams = opts.nats.streams.map((s) => specs[s as keyof typeof specs]);
    const jetStream = await declareJetStream(nc, { streams }, { log: (msg, extra) => logger.warn(extra ?? {}, msg) });
    const js = nc.jetstream();
    const relay = startOutboxRelay({ store, js, ...opts.outbox, log: (msg, extra) => logger.warn(extra ?? {}, msg) });
    exportOutboxMetrics(metrics.registry, relay);
    useServiceIdentity(name, config.INTERNAL_GRPC_SECRET);
    const auth = config.INTERNAL_GRPC_SECRET ? { service: name, secret: config.INTERNAL_GRPC_SECRET } : undefined;
    const grpc = createGrpcServer({ logger, metrics, auth });
    let httpOptions: Parameters<ServiceRuntime<C>['serveHttp']>[0] | undefined;
    const serveHttp: ServiceRuntime<C>['serveHttp'] = (options) => {
      if (httpOptions) throw new Error('serveHttp: a service runs at most one HTTP listener');
      httpOptions = options;
    };
    // Waiting for a publish is pointless while NATS is away: false at once (the events stay in the outbox).
    const awaitPublished = (timeoutMs: number) => jetStream.guard(() => relay.awaitPublished(timeoutMs)).catch(() => false);
    const stops =
      (await opts.setup({ name, config, logger, metrics, store, nc, js, grpc, notifyOutbox: relay.notify, awaitPublished, natsGuard: jetStream.guard, now: systemClock.now, newId: randomIds.newId, serveHttp })) ?? [];
    // After setup: the consumers it started are running and get their backlog gauges.
    const stopConsumerMetrics = exportConsumerMetrics(metrics.registry, logger);
    const grpcPort = await grpc.listen(opts.grpcAddress);
    const http: HttpListener | undefined = httpOptions ? await startHttpListener({ ...httpOptions, logger, metrics }) : undefined;
    const stopHealth = watchHealth(
      async () => jetStream.ready() && (await store.ping()),
      (ok) => {
        grpc.setServing(ok);
        logger.info({ serving: ok }, 'health changed');
      },
      // Often enough that a NATS outage or recovery shows within a couple of seconds.
      2_000,
    );
    const delay = config.SHUTDOWN_DELAY_MS;
    onShutdown(
      logger,
      [
        async () => stopHealth(),
        // Both front doors at once: neither waits for the other's slow clients. Each keeps serving for
        // the delay (NOT_SERVING; HTTP answers say Connection: close), then drains.
        // gRPC calls in flight get as long as the longest deadline (a feed preview); reader pages answer fast.
        () => Promise.all([grpc.shutdown(SHUTDOWN_DRAIN_MS, delay), http?.close(5_000, delay)]),
        stopConsumerMetrics,
        ...stops,
        async () => jetStream.close(),
        () => relay.stop(),
        () => nc.drain(),
        () => store.close(),
        () => closeMetricsServer(1_000),
      ],
      delay + SHUTDOWN_EXIT_MS,
    );
    logger.info({ grpcPort, ...(http ? { httpPort: http.port } : {}), metricsPort: metricsServer.port, store: store.kind }, 'ready');
  } catch (err) {
    logger.fatal({ err }, 'failed to start');
    process.exit(1);
  }
}

/** Each service owns its own database: the URI's database part is replaced by the service's. */
function withDatabase(uri: string, database: string): string {
  const url = new URL(uri);
  url.pathname = `/${database}`;
  return url.toString();
}
