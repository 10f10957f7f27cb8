import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Histogram, Registry };
export { Gauge } from 'prom-client';

/**
 * One registry per process (never prom-client's global one, so tests can build many apps in
 * one jest worker), with default process metrics, build info and the RED metrics of gRPC servers.
 */
export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  // Which version runs where (joins onto any series by service): 1, with the labels as the data.
  new Gauge({
    name: 'mailer_build_info',
    help: 'Version of the running process (package.json) and of Node.js; always 1',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: packageVersion(), node: process.version }, 1);
  const grpcHandled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'gRPC calls completed, by method and status code',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const grpcSeconds = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'gRPC call latency',
    labelNames: ['method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return { registry, grpcHandled, grpcSeconds };
}
export type Metrics = ReturnType<typeof createMetrics>;

/**
 * A counter with one label whose values are all known, each series exported (at 0) from the start:
 * an alert's rate or ratio over a series that only appears with its first event says nothing until
 * then (a bounce rate is absent, not 0 %, before the first bounce). Made once per registry: a second
 * call with the same name returns the first counter.
 */
export function outcomeCounter<L extends string>(
  registry: Registry,
  opts: { name: string; help: string; label: L; values: readonly string[] },
): Counter<L> {
  const existing = registry.getSingleMetric(opts.name) as Counter<L> | undefined;
  if (existing) return existing;
  const counter = new Counter<L>({ name: opts.name, help: opts.help, labelNames: [opts.label], registers: [registry] });
  for (const value of opts.values) counter.inc({ [opts.label]: value } as Partial<Record<L, string>>, 0);
  return counter;
}

/** The version in the package.json nearest to the entry script (services/<name>/dist/main.js -> services/<name>/package.json). */
function packageVersion(): string {
  let dir = require.main ? path.dirname(require.main.filename) : process.cwd();
  for (let i = 0; i < 4; i++) {
    try {
      const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof version === 'string') return version;
    } catch {
      // no package.json here; look one level up
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

/** Serves /metrics on its own port (never on a public listener). Port 0 picks a free one. */
export async function startMetricsServer(registry: Registry, port: number, host = '0.0.0.0'): Promise<http.Server & { port: number }> {
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}
