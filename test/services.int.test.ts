// Every service process is real from day one: it starts, answers grpc.health.v1 and a gRPC call,
// exposes Prometheus metrics on its own port, refuses bad configuration clearly and stops
// gracefully on SIGTERM.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import { createClient } from '@mailer/kit';
import * as proto from '@mailer/proto';
import { repoRoot, SERVICES, spawnReady, startNatsServer, startService, type RunningService, type ServiceName } from '@mailer/testing';

const healthPkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true })) as any;

function healthCheck(address: string, service: string): Promise<string> {
  const client = new healthPkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) =>
    client.check({ service }, { deadline: Date.now() + 3000 }, (err: Error | null, res: { status: string }) => {
      client.close();
      return err ? reject(err) : resolve(res.status);
    }),
  );
}

const clientOf: Record<Exclude<ServiceName, 'subscriber'>, any> = {
  segment: proto.segmentV1.SegmentServiceClient,
  form: proto.formV1.FormServiceClient,
  rss: proto.rssV1.RssServiceClient,
  messaging: proto.messagingV1.MessagingServiceClient,
  webhook: proto.webhookV1.WebhookServiceClient,
};

let nats: Awaited<ReturnType<typeof startNatsServer>>;
const started: RunningService[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await nats?.stop();
});

describe.each(SERVICES.filter((s) => s !== 'subscriber') as Exclude<ServiceName, 'subscriber'>[])('%s service', (name) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService(name, { NATS_URL: nats.url });
    started.push(svc);
  });

  it('answers grpc.health.v1 SERVING for the server, its service and liveness', async () => {
    expect(await healthCheck(svc.address, '')).toBe('SERVING');
    expect(await healthCheck(svc.address, `mailer.${name}.v1.${name[0].toUpperCase()}${name.slice(1)}Service`)).toBe('SERVING');
    expect(await healthCheck(svc.address, 'liveness')).toBe('SERVING');
  });

  it('answers its Describe RPC and counts it in /metrics on the metrics port', async () => {
    const client = createClient(clientOf[name], svc.address);
    expect(await client.describe({})).toEqual({ service: name, protoPackage: `mailer.${name}.v1` });
    client.close();
    const metrics = await (await fetch(`http://127.0.0.1:${svc.ready.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`grpc_server_handled_total\\{method="/mailer\\.${name}\\.v1\\.\\w+/Describe",code="OK",service="${name}"\\} 1`));
    expect(metrics).toContain('process_resident_memory_bytes');
  });

  if (name === 'webhook') {
    it('does not serve mailer.common.v1.FieldUsageService (webhooks never reference subscriber fields)', async () => {
      await expect(healthCheck(svc.address, 'mailer.common.v1.FieldUsageService')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    });
  } else {
    it('answers mailer.common.v1.FieldUsageService (no usages of its own yet)', async () => {
      expect(await healthCheck(svc.address, 'mailer.common.v1.FieldUsageService')).toBe('SERVING');
      const client = createClient(proto.commonV1.FieldUsageServiceClient, svc.address);
      expect(await client.listFieldUsages({ accountId: 'a', fieldId: '00000000-0000-4000-8000-000000000001', personalizationTagName: 'company' })).toEqual({ usages: [] });
      client.close();
    });
  }

  it('stops gracefully on SIGTERM (exit code 0)', async () => {
    expect(await svc.stop('SIGTERM')).toBe(0);
    expect(svc.output()).toContain('"msg":"stopped"');
  });
});

it('refuses to start with bad configuration, naming the variable', () => {
  const res = spawnSync(process.execPath, [path.join(repoRoot, 'services/segment/dist/main.js')], {
    env: { ...process.env, SEGMENT_GRPC_ADDR: 'nonsense', METRICS_PORT: '99999' },
    encoding: 'utf8',
    timeout: 10_000,
  });
  expect(res.status).toBe(78);
  expect(res.stderr).toContain('SEGMENT_GRPC_ADDR');
  expect(res.stderr).toContain('METRICS_PORT');
});

// What every test that needs a service gets when it is not built (gateway/test/support/full-stack.ts and the
// fuzz included): a failure naming the command, never a run without it.
it('a service that is not built fails the start loudly, naming the build command', async () => {
  await expect(spawnReady('services/not-built/dist/main.js', {})).rejects.toThrow('services/not-built/dist/main.js is not built: run `npm run build` first');
});

it('fails loudly when NATS cannot be reached', () => {
  const res = spawnSync(process.execPath, [path.join(repoRoot, 'services/form/dist/main.js')], {
    env: { ...process.env, NATS_URL: 'nats://127.0.0.1:1', DATA_DIR: path.join(require('node:os').tmpdir(), `mailer-form-${process.pid}`), NATS_CONNECT_TIMEOUT_MS: '1000', TRACKING_SECRET: 'x'.repeat(32) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(res.status).toBe(1);
  expect(res.stdout + res.stderr).toContain('failed to start');
});

it('NATS_REPLICAS: more copies than a single NATS server can hold stop the process, naming the stream; 0 is a configuration error', async () => {
  // A server of its own, so the streams are created here, with the configured copies: one server
  // refuses 3. (A single server takes an update of an existing stream's copies without a word.)
  const own = await startNatsServer();
  try {
    // stopped if it starts after all, so that a failure here leaves no process behind
    const started = startService('rss', { NATS_URL: own.url, NATS_REPLICAS: '3' }).then(async (svc) => (await svc.stop(), svc));
    await expect(started).rejects.toThrow(/cannot create JetStream stream (DOMAIN|JOBS|EVENTS) .*replicas/i);
  } finally {
    await own.stop();
  }
  const res = spawnSync(process.execPath, [path.join(repoRoot, 'services/rss/dist/main.js')], { env: { ...process.env, NATS_REPLICAS: '0' }, encoding: 'utf8', timeout: 10_000 });
  expect(res.status).toBe(78);
  expect(res.stderr).toContain('NATS_REPLICAS');
});
