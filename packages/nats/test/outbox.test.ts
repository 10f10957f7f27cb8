import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Context, context, createContextKey, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import { mongoose, openStore, Store } from '@mailer/store';
import { NatsConnection, StoredMsg } from 'nats';
import { startNatsServer, NatsServerHandle } from '../../testing/src/nats';
import { connectNats, ensureStreams, OUTBOX_COLLECTION, OutboxDoc, outboxRecord, outboxRepository, outboxSchema, publish, startOutboxRelay } from '../src';
import { sleep, waitFor } from './helpers';

let server: NatsServerHandle;
let nc: NatsConnection;
const tempDirs: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
let streamNo = 0;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats({ url: server.url, name: 'outbox-test', ...server.auth });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

afterAll(async () => {
  await nc?.close();
  await server?.stop();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

interface Subscriber {
  _id: string;
  email: string;
}
const subscriberSchema = new mongoose.Schema({ _id: String, email: { type: String, required: true } }, { versionKey: false });

/** A store and a stream of their own per test: the relay publishes whatever the store holds. */
async function fixture() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-test-'));
  tempDirs.push(dir);
  const store = await openStore({ dataDir: dir });
  cleanups.push(() => store.close());
  const name = `OB${++streamNo}`;
  const prefix = name.toLowerCase();
  await ensureStreams(nc, [{ name, subjects: [`${prefix}.>`], retention: 'limits', maxAgeMs: 3_600_000, duplicateWindowMs: 600_000 }]);
  const subscribers = store.collection<Subscriber>('subscribers', subscriberSchema);
  const outbox = store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema);
  const subject = `${prefix}.subscriber.created`;

  /** The pattern services follow: the business write and its event commit together. */
  async function createSubscriber(i: number, fail = false): Promise<OutboxDoc> {
    const record = outboxRecord(subject, { subscriberId: `s${i}`, i });
    await store.transaction(async (tx) => {
      await subscribers.insertOne({ _id: `s${i}`, email: `s${i}@example.com` }, { tx });
      await outbox.insertOne(record, { tx });
      if (fail) throw new Error('business rule failed after the writes');
    });
    return record;
  }

  async function streamMessages(): Promise<StoredMsg[]> {
    const jsm = await nc.jetstreamManager();
    const { state } = await jsm.streams.info(name);
    const out: StoredMsg[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      out.push(await jsm.streams.getMessage(name, { seq }));
    }
    return out;
  }

  function relay(opts: { store?: Store; intervalMs?: number; retainPublishedMs?: number; log?: (msg: string) => void } = {}) {
    const r = startOutboxRelay({ store: opts.store ?? store, js: nc.jetstream(), intervalMs: opts.intervalMs ?? 60_000, batchSize: 3, retainPublishedMs: opts.retainPublishedMs, log: opts.log });
    cleanups.push(() => r.stop());
    return r;
  }

  return { store, name, subject, outbox, subscribers, createSubscriber, streamMessages, relay };
}

/** A store whose outbox marking fails after `okMarks` successes: the relay "dies" between publish and mark. */
function crashingAfterMarks(store: Store, okMarks: number): Store {
  let marks = 0;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'collection') return Reflect.get(target, prop, receiver);
      return (name: string, schema: mongoose.Schema) => {
        const real = target.collection<OutboxDoc>(name, schema);
        return new Proxy(real, {
          get(c, p, r) {
            if (p !== 'updateOne') return Reflect.get(c, p, r);
            return async (...args: Parameters<typeof real.updateOne>) => {
              if (++marks > okMarks) throw new Error('simulated crash before marking');
              return c.updateOne(...args);
            };
          },
        });
      };
    },
  });
}

it('publishes documents committed in a transaction once, in createdAt order, and marks them', async () => {
  const f = await fixture();
  const records: OutboxDoc[] = [];
  for (let i = 0; i < 7; i++) records.push(await f.createSubscriber(i));
  const r = f.relay();
  expect(await r.flush()).toBe(7);
  expect(await r.flush()).toBe(0);

  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(records.map((d) => d._id));
  expect(msgs.map((m) => m.json<{ i: number }>().i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(msgs.every((m) => m.subject === f.subject)).toBe(true);
  expect(await f.outbox.countDocuments({ publishedAt: null })).toBe(0);
  expect(await f.outbox.countDocuments({ publishedAt: { $ne: null } })).toBe(7);
});

it('publishes nothing for a rolled-back transaction', async () => {
  const f = await fixture();
  await expect(f.createSubscriber(1, true)).rejects.toThrow('business rule failed');
  await f.createSubscriber(2);
  const r = f.relay();
  expect(await r.flush()).toBe(1);
  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.json<{ i: number }>().i)).toEqual([2]);
  expect(await f.subscribers.countDocuments({})).toBe(1);
});

it('a relay that dies between publish and mark loses nothing and JetStream stores each msgID once', async () => {
  const f = await fixture();
  const records: OutboxDoc[] = [];
  for (let i = 0; i < 5; i++) records.push(await f.createSubscriber(i));

  // First relay: marks two documents, publishes the third and "crashes" before marking it.
  const crashing = f.relay({ store: crashingAfterMarks(f.store, 2) });
  await expect(crashing.flush()).rejects.toThrow('simulated crash');
  await crashing.stop();
  expect(await f.outbox.countDocuments({ publishedAt: null })).toBe(3);
  expect((await f.streamMessages()).length).toBe(3);

  // Restarted relay re-publishes the unmarked third document; the stream de-duplicates it.
  const restarted = f.relay();
  expect(await restarted.flush()).toBe(3);
  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(records.map((d) => d._id));
  expect(await f.outbox.countDocuments({ publishedAt: null })).toBe(0);
});

it('a relay that published everything but marked nothing is fully de-duplicated on restart', async () => {
  const f = await fixture();
  const records: OutboxDoc[] = [];
  for (let i = 0; i < 4; i++) records.push(await f.createSubscriber(i));
  const crashing = f.relay({ store: crashingAfterMarks(f.store, 0) });
  await expect(crashing.flush()).rejects.toThrow('simulated crash');
  // Only the first got out before the crash; publish the rest "by the dead relay" to widen the gap.
  for (const d of records.slice(1)) await publish(nc.jetstream(), d.subject, d.payload, { msgID: d._id });
  await crashing.stop();

  const restarted = f.relay();
  expect(await restarted.flush()).toBe(4);
  const msgs = await f.streamMessages();
  expect(msgs).toHaveLength(4);
  expect(msgs.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(records.map((d) => d._id));
});

it('two relays on the same store (two replicas) still publish each document once', async () => {
  const f = await fixture();
  for (let i = 0; i < 9; i++) await f.createSubscriber(i);
  const a = f.relay();
  const b = f.relay();
  await Promise.all([a.flush(), b.flush()]);
  expect(await f.outbox.countDocuments({ publishedAt: null })).toBe(0);
  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.json<{ i: number }>().i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

it('publishes on its own timer, and at once after notify()', async () => {
  const f = await fixture();
  // services log the relay's lines as warnings: a round that published is no warning
  const logged: string[] = [];
  const polling = f.relay({ intervalMs: 100, log: (msg) => logged.push(msg) });
  await f.createSubscriber(1);
  await waitFor('timer-driven publish', async () => (await f.streamMessages()).length === 1, 3_000);
  await polling.stop();
  expect(logged).toEqual([]);

  const idle = f.relay({ intervalMs: 60_000 });
  await idle.flush(); // a round done; the next timer round is a minute away
  await f.createSubscriber(2);
  idle.notify();
  await waitFor('notified publish', async () => (await f.streamMessages()).length === 2, 2_000);
});

it('deletes published documents once they are older than the retention', async () => {
  const f = await fixture();
  await f.createSubscriber(1);
  await f.relay().flush();
  await sleep(20);
  await f.createSubscriber(2);
  // A relay starting later cleans up: the first document is past the (tiny) retention.
  const r = f.relay({ retainPublishedMs: 10 });
  expect(await r.flush()).toBe(1);
  const left = await f.outbox.find({});
  expect(left.map((d) => (d.payload as { i: number }).i)).toEqual([2]);
});

it('with retainPublishedMs 0 deletes each batch once published, in order, and keeps what a failure left unpublished', async () => {
  const f = await fixture();
  const records: OutboxDoc[] = [];
  for (let i = 0; i < 7; i++) records.push(await f.createSubscriber(i));
  const r = f.relay({ retainPublishedMs: 0 });
  expect(await r.flush()).toBe(7);
  expect(await f.outbox.countDocuments({})).toBe(0);
  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(records.map((d) => d._id));

  // A publish that fails mid-batch: what was published is deleted, the rest stays pending.
  await f.createSubscriber(7);
  await f.outbox.insertOne(outboxRecord('no-stream-takes.this.subject', { i: 8 }));
  await f.createSubscriber(9);
  await expect(r.flush()).rejects.toThrow();
  const left = await f.outbox.find({}, { sort: { createdAt: 1 } });
  expect(left.map((d) => (d.payload as { i: number }).i)).toEqual([8, 9]);
});

it('facts recorded together are one document but each its own message, in order, with its id as msgID, once across a crash', async () => {
  const f = await fixture();
  const facts = Array.from({ length: 5 }, (_, i) => ({ subject: f.subject, payload: { i }, id: `fact-${i}` }));
  await f.store.transaction((tx) => outboxRepository(f.store).recordTogether(tx, facts));
  await f.createSubscriber(5);
  expect(await f.outbox.countDocuments({})).toBe(2);

  // A relay that published everything and died before marking: the restarted one publishes again.
  const crashing = f.relay({ store: crashingAfterMarks(f.store, 0) });
  await expect(crashing.flush()).rejects.toThrow('simulated crash');
  await crashing.stop();
  expect(await f.relay().flush()).toBe(6);
  const msgs = await f.streamMessages();
  expect(msgs.map((m) => m.json<{ i: number }>().i)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(msgs.slice(0, 5).map((m) => m.header.get('Nats-Msg-Id'))).toEqual(facts.map((x) => x.id));
});

it('a document of facts recorded together is deleted only once all of them are stored', async () => {
  const f = await fixture();
  const r = f.relay({ retainPublishedMs: 0 });
  const repo = outboxRepository(f.store);
  await f.store.transaction((tx) => repo.recordTogether(tx, [{ subject: f.subject, payload: { i: 0 } }, { subject: f.subject, payload: { i: 1 } }]));
  await f.store.transaction((tx) => repo.recordTogether(tx, [{ subject: f.subject, payload: { i: 2 } }, { subject: 'no-stream-takes.this.subject', payload: { i: 3 } }]));
  await expect(r.flush()).rejects.toThrow();
  // the first document went out whole and is gone; the second stays pending, its stored fact included
  const left = await f.outbox.find({});
  expect(left.map((d) => d.facts!.map((x) => (x.payload as { i: number }).i))).toEqual([[2, 3]]);
  expect((await f.streamMessages()).map((m) => m.json<{ i: number }>().i)).toEqual([0, 1, 2]);
});

it('carries the trace context of the write to the published message', async () => {
  const key = createContextKey('trace');
  const als = new AsyncLocalStorage<Context>();
  context.setGlobalContextManager({
    active: () => als.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => als.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_c, t) => t,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  });
  propagation.setGlobalPropagator({
    inject: (ctx, carrier, setter) => {
      const v = ctx.getValue(key);
      if (typeof v === 'string') setter.set(carrier, 'traceparent', v);
    },
    extract: (ctx) => ctx,
    fields: () => ['traceparent'],
  });
  cleanups.push(async () => {
    context.disable();
    propagation.disable();
  });

  const f = await fixture();
  const r = f.relay();
  await context.with(ROOT_CONTEXT.setValue(key, 'request-trace'), async () => {
    await f.createSubscriber(1);
    // Flushing from inside another request must not stamp that request's context on the message.
    await context.with(ROOT_CONTEXT.setValue(key, 'unrelated-request'), () => r.flush());
  });
  const [msg] = await f.streamMessages();
  expect(msg.header.get('traceparent')).toBe('request-trace');
});

it('awaitPublished resolves once everything committed before the call is on the stream', async () => {
  const f = await fixture();
  const r = f.relay({ retainPublishedMs: 0 });
  await r.flush();
  for (let round = 0; round < 5; round++) {
    // More than one batch (batchSize 3) committed while the relay idles (60 s timer, no notify).
    const records: OutboxDoc[] = [];
    for (let i = 0; i < 7; i++) records.push(await f.createSubscriber(round * 10 + i));
    expect(await r.awaitPublished(5_000)).toBe(true);
    const ids = new Set((await f.streamMessages()).map((m) => m.header.get('Nats-Msg-Id')));
    for (const d of records) expect(ids.has(d._id)).toBe(true);
    expect(await f.outbox.countDocuments({})).toBe(0);
  }
});

it('awaitPublished gives up after its timeout when nothing can be published, and false after stop()', async () => {
  const f = await fixture();
  await f.createSubscriber(1);
  // A relay whose publishes never get an answer: a subject no stream captures fails (no responders).
  const failing = startOutboxRelay({
    store: f.store,
    js: nc.jetstream(),
    intervalMs: 60_000,
    collection: OUTBOX_COLLECTION,
  });
  cleanups.push(() => failing.stop());
  await f.outbox.insertOne(outboxRecord('nostream.subject', { x: 1 }));
  const started = Date.now();
  expect(await failing.awaitPublished(400)).toBe(false);
  expect(Date.now() - started).toBeLessThan(3_000);
  await failing.stop();
  expect(await failing.awaitPublished(1_000)).toBe(false);
});
