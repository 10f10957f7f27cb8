import { AsyncLocalStorage } from 'node:async_hooks';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Context, context, createContextKey, propagation, ROOT_CONTEXT, TextMapPropagator } from '@opentelemetry/api';
import { NatsConnection } from 'nats';
import { freePort, startNatsServer, NatsServerHandle } from '../../testing/src/nats';
import { connectNats, ConsumedMessage, ensureStreams, ConsumerOptions, HandlerResult, publish, runConsumer, runningConsumers } from '../src';
import { freshStream, sleep, waitFor } from './helpers';

let server: NatsServerHandle;
let nc: NatsConnection;
const handles: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats({ url: server.url, name: 'consumer-test', ...server.auth });
});

afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.stop()));
});

afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

function consume(opts: ConsumerOptions) {
  const h = runConsumer(nc, opts);
  handles.push(h);
  return h;
}

async function publishMany(subject: string, n: number, from = 0): Promise<void> {
  const js = nc.jetstream();
  for (let i = from; i < from + n; i++) await publish(js, subject, { i }, { msgID: `${subject}-${i}` });
}

it('never runs more handlers at once than `concurrency`, and uses all of them', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 40);
  let inFlight = 0;
  let maxInFlight = 0;
  const seen = new Set<number>();
  consume({
    stream: name,
    durable: 'bounded',
    concurrency: 4,
    handler: async (msg) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(25);
      seen.add(msg.data.i);
      inFlight--;
      return 'ack';
    },
  });
  await waitFor('all 40 messages', () => seen.size === 40, 15_000);
  expect(maxInFlight).toBe(4);
});

it('redelivers a message whose handler threw, after the backoff delay for that delivery', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 1);
  const deliveries: { at: number; count: number }[] = [];
  const h = consume({
    stream: name,
    durable: 'retry',
    backoffMs: [400, 800],
    handler: async (msg) => {
      deliveries.push({ at: Date.now(), count: msg.deliveryCount });
      if (msg.deliveryCount < 3) throw new Error('transient');
      return 'ack';
    },
  });
  await waitFor('third delivery', () => deliveries.length === 3, 10_000);
  expect(deliveries.map((d) => d.count)).toEqual([1, 2, 3]);
  const gap1 = deliveries[1].at - deliveries[0].at;
  const gap2 = deliveries[2].at - deliveries[1].at;
  expect(gap1).toBeGreaterThanOrEqual(380);
  expect(gap1).toBeLessThan(2_000);
  expect(gap2).toBeGreaterThanOrEqual(780);
  expect(gap2).toBeLessThan(2_500);
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000);
});

it('honours a handler-chosen nak delay', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 1);
  const at: number[] = [];
  consume({
    stream: name,
    durable: 'nak',
    handler: async (): Promise<HandlerResult> => {
      at.push(Date.now());
      return at.length === 1 ? { nakDelayMs: 300 } : 'ack';
    },
  });
  await waitFor('redelivery', () => at.length === 2, 5_000);
  expect(at[1] - at[0]).toBeGreaterThanOrEqual(280);
});

it('does not redeliver a message the handler terminated', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 1);
  let calls = 0;
  const h = consume({
    stream: name,
    durable: 'term',
    ackWaitMs: 1_000,
    handler: async () => {
      calls++;
      return 'term';
    },
  });
  await waitFor('the call', () => calls === 1, 10_000);
  // nothing pending or awaiting its ack (the barrier): a merely unacked message would still be
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000);
  expect(calls).toBe(1);
});

it('calls an always-failing handler exactly maxDeliver times', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 1);
  let calls = 0;
  const h = consume({
    stream: name,
    durable: 'poison',
    maxDeliver: 3,
    backoffMs: [50],
    ackWaitMs: 1_000,
    handler: async () => {
      calls++;
      throw new Error('always');
    },
  });
  await waitFor('three calls', () => calls === 3, 5_000);
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000); // the barrier: nothing left to deliver
  expect(calls).toBe(3);
});

it('terminates a payload that is not JSON without calling the handler', async () => {
  const { name, subject } = await freshStream(nc);
  await nc.jetstream().publish(subject('x'), new TextEncoder().encode('{not json'));
  await publishMany(subject('x'), 1);
  const got: unknown[] = [];
  const h = consume({ stream: name, durable: 'json', handler: async (m) => (got.push(m.data), 'ack') });
  await waitFor('the message', () => got.length === 1, 10_000);
  expect(got).toEqual([{ i: 0 }]);
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000);
});

it('resumes a durable consumer after stop/restart without losing or reprocessing messages', async () => {
  const { name, subject } = await freshStream(nc);
  const processed: number[] = [];
  const opts: ConsumerOptions = {
    stream: name,
    durable: 'resume',
    concurrency: 3,
    ackWaitMs: 1_000,
    handler: async (msg) => {
      processed.push(msg.data.i);
      return 'ack';
    },
  };
  await publishMany(subject('x'), 10);
  const first = runConsumer(nc, opts);
  await waitFor('10 processed', () => processed.length === 10, 10_000);
  await first.stop();

  await publishMany(subject('x'), 10, 10); // arrive while nobody consumes
  const second = consume(opts);
  await waitFor('20 messages', () => processed.length >= 20, 10_000);
  // the barrier: nothing pending or unacknowledged, so nothing more can be delivered
  await waitFor('lag 0', async () => (await second.lag()) === 0, 5_000);
  expect([...processed].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
});

it('stop() waits for in-flight handlers and their acks', async () => {
  const { name, subject } = await freshStream(nc);
  await publishMany(subject('x'), 3);
  let started = 0;
  let finished = 0;
  const h = runConsumer(nc, {
    stream: name,
    durable: 'drain',
    handler: async () => {
      started++;
      await sleep(300);
      finished++;
      return 'ack';
    },
  });
  await waitFor('3 started', () => started === 3, 10_000);
  await h.stop();
  expect(finished).toBe(3);
  const info = await (await nc.jetstreamManager()).consumers.info(name, 'drain');
  expect(info.num_ack_pending + info.num_pending).toBe(0);
});

it('reports lag: undelivered plus delivered-but-unacked', async () => {
  const { name, subject } = await freshStream(nc);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started = 0;
  const h = consume({
    stream: name,
    durable: 'lag',
    concurrency: 2,
    handler: async () => {
      started++;
      await gate;
      return 'ack';
    },
  });
  expect(await h.lag()).toBe(0);
  await publishMany(subject('x'), 6);
  await waitFor('2 started', () => started === 2, 10_000);
  expect(await h.lag()).toBe(6);
  expect(await h.counts()).toEqual({ pending: 4, ackPending: 2, redelivered: 0 });
  release();
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000);
  expect(started).toBe(6);
});

it('counts redelivered messages, and lists the consumer as running until stopped (metrics read both)', async () => {
  const { name, subject } = await freshStream(nc);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let deliveries = 0;
  const h = runConsumer(nc, {
    stream: name,
    durable: 'redelivered',
    backoffMs: [100],
    handler: async () => {
      if (++deliveries === 1) throw new Error('first delivery fails');
      await gate;
      return 'ack';
    },
  });
  expect(runningConsumers()).toContain(h);
  await publishMany(subject('x'), 1);
  await waitFor('redelivery', () => deliveries === 2, 5_000);
  expect(await h.counts()).toEqual({ pending: 0, ackPending: 1, redelivered: 1 });
  release();
  await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000);
  await h.stop();
  expect(runningConsumers()).not.toContain(h);
});

it('filters by subject and hands over subject, headers, seq and msgID', async () => {
  const { name, subject } = await freshStream(nc);
  const js = nc.jetstream();
  await publish(js, subject('a'), { a: 1 }, { msgID: 'm-a', headers: { 'x-k': 'v' } });
  const b = await publish(js, subject('b'), { b: 1 }, { msgID: 'm-b' });
  const got: ConsumedMessage[] = [];
  consume({ stream: name, durable: 'filter', filterSubject: subject('b'), handler: async (m) => (got.push(m), 'ack') });
  await waitFor('the message', () => got.length === 1, 10_000);
  // the barrier: the stream's message of the other subject was never this consumer's to deliver
  expect((await (await nc.jetstreamManager()).consumers.info(name, 'filter')).num_pending).toBe(0);
  expect(got).toHaveLength(1);
  expect(got[0]).toMatchObject({ subject: subject('b'), data: { b: 1 }, seq: b.seq, deliveryCount: 1, msgID: 'm-b' });
});

it('waits for a stream created after the consumer started', async () => {
  const name = `LATE${process.pid}`;
  const got: number[] = [];
  const logged: string[] = [];
  consume({ stream: name, durable: 'late', handler: async (m) => (got.push(m.data.i), 'ack'), log: (msg) => logged.push(msg) });
  // it tried, found no stream, and keeps trying
  await waitFor('a failed pull', () => logged.includes('consumer pull failed; retrying'), 10_000);
  await ensureStreams(nc, [{ name, subjects: ['late.>'], retention: 'workqueue', maxAgeMs: 60_000, duplicateWindowMs: 10_000 }]);
  await publish(nc.jetstream(), 'late.x', { i: 7 });
  await waitFor('message on late stream', () => got.length === 1, 10_000);
  expect(got).toEqual([7]);
});

it('updates the durable consumer when its options change between deployments', async () => {
  const { name } = await freshStream(nc);
  const opts = { stream: name, durable: 'cfg', handler: async () => 'ack' as const };
  const a = runConsumer(nc, { ...opts, maxDeliver: 4, ackWaitMs: 2_000 });
  await a.lag();
  await a.stop();
  const b = consume({ ...opts, maxDeliver: 6, ackWaitMs: 3_000 });
  await b.lag();
  const info = await (await nc.jetstreamManager()).consumers.info(name, 'cfg');
  expect(info.config.max_deliver).toBe(6);
  expect(info.config.ack_wait).toBe(3_000 * 1e6);
  expect(info.config.ack_policy).toBe('explicit');
});

it('keeps consuming across a nats-server restart', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-restart-'));
  const port = await freePort();
  let own = await startNatsServer({ storeDir: dir, port });
  const conn = await connectNats({ url: own.url, name: 'restart', ...own.auth });
  const got: number[] = [];
  // A pull the client had already given up when the server handed it a message delays that message
  // by ack_wait (then it is redelivered): that is the bound this test allows, with a short ack_wait.
  const h = runConsumer(conn, { stream: 'RESTART', durable: 'r', ackWaitMs: 3_000, handler: async (m) => (got.push(m.data.i), 'ack') });
  try {
    await ensureStreams(conn, [{ name: 'RESTART', subjects: ['restart.>'], retention: 'limits', maxAgeMs: 60_000, duplicateWindowMs: 10_000 }]);
    await publish(conn.jetstream(), 'restart.x', { i: 1 });
    await waitFor('the message', () => got.length === 1, 10_000);
    await own.stop();
    own = await startNatsServer({ storeDir: dir, port });
    await waitFor('publish after restart', async () => {
      try {
        await publish(conn.jetstream(), 'restart.x', { i: 2 }, { msgID: 'after-restart' });
        return true;
      } catch {
        return false; // still reconnecting
      }
    }, 15_000);
    await waitFor('delivery after restart', () => got.includes(2), 15_000);
    // At least once: an ack the server confirmed just before it stopped may not be in its stored
    // consumer state yet, so the restarted server can hand message 1 over again (seen here under
    // load: 1, 1, 2). Handlers are idempotent for that reason; what must hold is that nothing is lost.
    expect(got[0]).toBe(1);
    expect(new Set(got)).toEqual(new Set([1, 2]));
  } finally {
    await h.stop();
    await conn.close();
    await own.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('rejects options that would make delivery unbounded or concurrency meaningless', () => {
  const base = { stream: 'S', durable: 'd', handler: async () => 'ack' as const };
  expect(() => runConsumer(nc, { ...base, maxDeliver: -1 })).toThrow(/maxDeliver/);
  expect(() => runConsumer(nc, { ...base, concurrency: 0 })).toThrow(/concurrency/);
  expect(() => runConsumer(nc, { ...base, backoffMs: [] })).toThrow(/backoffMs/);
});

describe('trace context', () => {
  // Minimal stand-ins for the SDK pieces: a context manager over AsyncLocalStorage and a propagator
  // that carries one value in a header. The code under test only uses the @opentelemetry/api facade.
  const key = createContextKey('test-trace');
  const als = new AsyncLocalStorage<Context>();
  const propagator: TextMapPropagator = {
    inject(ctx, carrier, setter) {
      const v = ctx.getValue(key);
      if (typeof v === 'string') setter.set(carrier, 'x-test-trace', v);
    },
    extract(ctx, carrier, getter) {
      const v = getter.get(carrier, 'x-test-trace');
      return typeof v === 'string' ? ctx.setValue(key, v) : ctx;
    },
    fields: () => ['x-test-trace'],
  };

  beforeAll(() => {
    context.setGlobalContextManager({
      active: () => als.getStore() ?? ROOT_CONTEXT,
      with: (ctx, fn, thisArg, ...args) => als.run(ctx, () => fn.call(thisArg, ...args)),
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    });
    propagation.setGlobalPropagator(propagator);
  });

  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  it('runs the handler inside the context the message was published in', async () => {
    const { name, subject } = await freshStream(nc);
    await context.with(ROOT_CONTEXT.setValue(key, 'trace-123'), () => publish(nc.jetstream(), subject('x'), { i: 1 }));
    await publish(nc.jetstream(), subject('x'), { i: 2 }); // published outside any trace
    const seen: [number, unknown, string | undefined][] = [];
    consume({
      stream: name,
      durable: 'trace',
      concurrency: 1,
      handler: async (m) => {
        await sleep(5); // the context must survive awaits inside the handler
        seen.push([m.data.i, context.active().getValue(key), m.headers['x-test-trace']]);
        return 'ack';
      },
    });
    await waitFor('2 seen', () => seen.length === 2, 10_000);
    expect(seen).toEqual([
      [1, 'trace-123', 'trace-123'],
      [2, undefined, undefined],
    ]);
  });
});

describe('batch mode', () => {
  it('hands messages over in stream order, in batches of at most batchSize, with concurrency batches in flight', async () => {
    const { name, subject } = await freshStream(nc);
    await publishMany(subject('x'), 120);
    const seen: number[] = [];
    const sizes: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    consume({
      stream: name,
      durable: 'batches',
      concurrency: 2,
      batchSize: 16,
      batchHandler: async (msgs) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        sizes.push(msgs.length);
        seen.push(...msgs.map((m) => m.data.i));
        await sleep(10);
        inFlight--;
        return msgs.map(() => 'ack' as const);
      },
    });
    await waitFor('all 120 messages', () => seen.length === 120, 15_000);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16);
    expect(maxInFlight).toBeLessThanOrEqual(2);
  });

  it('settles each message by its own result: ack, term, error (retried with backoff), nak', async () => {
    const { name, subject } = await freshStream(nc);
    await publishMany(subject('x'), 4);
    const deliveries = new Map<number, number[]>();
    const h = consume({
      stream: name,
      durable: 'batch-results',
      backoffMs: [200],
      batchHandler: async (msgs) =>
        msgs.map((m) => {
          deliveries.set(m.data.i, [...(deliveries.get(m.data.i) ?? []), m.deliveryCount]);
          if (m.data.i === 1) return 'term';
          if (m.data.i === 2 && m.deliveryCount === 1) return { error: new Error('transient') };
          if (m.data.i === 3 && m.deliveryCount === 1) return { nakDelayMs: 100 };
          return 'ack';
        }),
    });
    await waitFor('retries', () => (deliveries.get(2)?.length ?? 0) === 2 && (deliveries.get(3)?.length ?? 0) === 2, 10_000);
    await waitFor('lag 0', async () => (await h.lag()) === 0, 5_000); // the barrier: nothing left to deliver
    expect(deliveries.get(0)).toEqual([1]);
    expect(deliveries.get(1)).toEqual([1]);
    expect(deliveries.get(2)).toEqual([1, 2]);
    expect(deliveries.get(3)).toEqual([1, 2]);
    expect(await h.lag()).toBe(0);
  });

  it('retries every message of a batch whose handler threw, and stop() waits for batches and their acks', async () => {
    const { name, subject } = await freshStream(nc);
    await publishMany(subject('x'), 10);
    let calls = 0;
    let acked = 0;
    const h = consume({
      stream: name,
      durable: 'batch-throw',
      backoffMs: [100],
      batchHandler: async (msgs) => {
        if (calls++ === 0) throw new Error('store down');
        await sleep(50);
        acked += msgs.length;
        return msgs.map(() => 'ack' as const);
      },
    });
    await waitFor('all acked after the retry', () => acked === 10, 10_000);
    await h.stop();
    const info = await (await nc.jetstreamManager()).consumers.info(name, 'batch-throw');
    expect(info.num_ack_pending + info.num_pending).toBe(0);
  });

  it('requires exactly one of handler and batchHandler', () => {
    expect(() => runConsumer(nc, { stream: 'S', durable: 'd' })).toThrow(/exactly one/);
    expect(() => runConsumer(nc, { stream: 'S', durable: 'd', handler: async () => 'ack', batchHandler: async () => [] })).toThrow(/exactly one/);
  });
});
