import { randomUUID } from 'node:crypto';
import { adminRequest, grpcHealth, startNatsServer, waitFor, type NatsServerHandle } from '@mailer/testing';
import { call, event, readEvents, sleep } from './support/harness';
import { startWiredStack, type WiredStack } from './support/segment-wired-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

// NATS restarts (kill -9, then started again on the same port over the same store): the memory-stored
// rate-limit bucket is gone, file-stored streams survive. The gateway and the services must heal by
// themselves: /readyz says 503 while NATS is down, answers are 2xx again within seconds of NATS being
// back, no event acknowledged with 202 is lost, and the segment projection keeps applying DOMAIN events.
// While NATS is away, every request that needs it (accounts and budgets in KV, idempotency keys, the
// EVENTS publish) is answered 503 within a second, those in flight when it died included.
let env: WiredStack;
let restarted: NatsServerHandle | undefined;

beforeAll(async () => {
  env = await startWiredStack();
}, 90_000);
afterAll(async () => {
  // Before the stack removes the store directory the restarted server uses.
  await restarted?.stop();
  await env?.stop();
});

const RECOVERY_BOUND_MS = 10_000;

interface Outcome {
  /** When the request was sent. */
  at: number;
  /** How long its answer took. */
  ms: number;
  kind: 'get' | 'event';
  status: number;
  eventId?: string;
}

/** Authenticated GETs and POST /events from a few concurrent clients until stopped; every answer recorded. */
function load(a: Api, clients = 3): { outcomes: Outcome[]; stop(): Promise<void> } {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      let at = Date.now();
      const get = await a.get('/subscribers?pageSize=1').catch(() => undefined);
      if (get) outcomes.push({ at, ms: Date.now() - at, kind: 'get', status: get.status });
      at = Date.now();
      // With an idempotencyKey: the accepted-keys bucket is read and written too.
      const ev = await a.post('/events', event({ idempotencyKey: randomUUID() })).catch(() => undefined);
      if (ev) outcomes.push({ at, ms: Date.now() - at, kind: 'event', status: ev.status, eventId: ev.json?.eventId });
      await sleep(20);
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

const servicesHealth = async () => [await grpcHealth(env.subscriber.address), await grpcHealth(env.segment.address)];

const readyz = async () => (await call(env.gw, 'GET', '/readyz')).status;

it('recovers by itself after a NATS restart: readiness follows, 2xx again, no accepted event lost', async () => {
  const a = await env.account('restart');
  // The load is not to be rate limited (a 429 would hide what this test looks for).
  await adminRequest(env.gw, 'PATCH', `/admin/accounts/${a.accountId}/rate-limits`, { eventsPerSecond: 100_000, eventsBurst: 100_000 });
  const quiet = await env.account('quiet'); // not under load: nothing of it is queued behind stuck requests
  const segment = expectStatus(
    await a.post('/segments', {
      name: 'Z*',
      expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'z' } }] }] },
    }),
    201,
  );
  expect(await readyz()).toBe(200);
  expect(await servicesHealth()).toEqual(['SERVING', 'SERVING']);

  const traffic = load(a);
  // the load is answered before the outage (some of each kind)
  await waitFor('load answered before the kill', () => ['get', 'event'].every((kind) => traffic.outcomes.filter((o) => o.kind === kind && o.status < 300).length >= 10), 20_000);
  const { port, storeDir, pid } = env.stack.nats;
  process.kill(pid, 'SIGKILL');
  const killedAt = Date.now();

  // While NATS is down: not ready, every time it is asked.
  await until('/readyz 503 after the kill', async () => (await readyz()) === 503, 5_000);
  for (let i = 0; i < 5; i++) {
    expect(await readyz()).toBe(503);
    await sleep(300);
  }
  // The services' gRPC health follows NATS too.
  await until('services NOT_SERVING', async () => (await servicesHealth()).every((st) => st === 'NOT_SERVING'), 5_000);
  // A request that arrives while NATS is down is refused at once, not left hanging.
  const asked = Date.now();
  expect((await quiet.get('/subscribers?pageSize=1')).status).toBe(503);
  expect(Date.now() - asked).toBeLessThan(1_000);

  const restartingAt = Date.now();
  restarted = await startNatsServer({ port, storeDir });
  const backAt = Date.now();
  const readyAfter = await until('/readyz 200', async () => (await readyz()) === 200, RECOVERY_BOUND_MS);
  const answeringAfter = await until(
    'authenticated GET and POST /events answered 2xx',
    async () => (await a.get('/subscribers?pageSize=1')).status === 200 && (await a.post('/events', event())).status === 202,
    RECOVERY_BOUND_MS,
  );
  await until('services SERVING', async () => (await servicesHealth()).every((st) => st === 'SERVING'), RECOVERY_BOUND_MS);
  // Load keeps running for a while after recovery: what is sent from now on must be answered, all of it.
  const steadyFrom = Date.now();
  await waitFor('load answered after the recovery', () => traffic.outcomes.filter((o) => o.at >= steadyFrom).length >= 20, 20_000);
  await traffic.stop();
  const outcomes = traffic.outcomes;

  // Requests caught by the outage fail cleanly: never a 500.
  expect([...new Set(outcomes.map((o) => o.status))].filter((s) => ![200, 202, 503].includes(s))).toEqual([]);
  // ... and at once: those in flight when NATS died and every one sent while it was away.
  const away = outcomes.filter((o) => o.at + o.ms >= killedAt && o.at < restartingAt);
  expect(away.filter((o) => o.at >= killedAt && o.status === 503).length).toBeGreaterThan(10);
  expect(away.filter((o) => o.ms >= 1_000)).toEqual([]);
  const steady = outcomes.filter((o) => o.at >= steadyFrom);
  expect(steady.length).toBeGreaterThan(0);
  expect(steady.filter((o) => o.status >= 300)).toEqual([]);
  process.stdout.write(`nats restart: /readyz 200 after ${readyAfter} ms, answering ${answeringAfter} ms later; ${outcomes.length} requests\n`);

  // Every event answered 202 (before, during and after the outage) is on the EVENTS stream.
  const accepted = outcomes.filter((o) => o.kind === 'event' && o.status === 202).map((o) => o.eventId);
  expect(accepted.length).toBeGreaterThan(0);
  const stored = new Set((await readEvents(env.stack.nc, a.accountId)).map((m) => m.data.eventId));
  expect(accepted.filter((id) => !stored.has(id))).toEqual([]);

  // The segment projection still applies DOMAIN events: a contact created after the restart is counted.
  expectStatus(await a.post('/subscribers', { email: 'zed@example.org', firstName: 'Zed' }), 201);
  await until('segment count 1', async () => expectStatus(await a.get(`/segments/${segment.id}/count`), 200).subscriberCount === 1, 15_000);
}, 120_000);
