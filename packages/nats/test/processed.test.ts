// Processed-message ids on a real embedded store: work committed once per message id, whatever the
// deliveries (repeated, concurrent, failing), per consumer, and forgotten after the retention.
import { mongoose, type Store } from '@mailer/store';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { messageIdOf, processedMessages, PROCESSED_MESSAGES_COLLECTION, processedMessageSchema } from '../src/processed';
import { sleep } from './helpers';

let temp: TempStore;
let store: Store;
const effectSchema = new mongoose.Schema({ _id: String, messageId: String }, { versionKey: false });
const effects = () => store.collection<{ _id: string; messageId: string }>('effects', effectSchema);
let effectN = 0;

beforeAll(async () => {
  temp = await openTempStore('nats-processed');
  store = temp.store;
});
afterAll(() => temp?.close());

/** The consumer's work: one effect document per run, written in the transaction it is given. */
function work(messageId: string, runs: { n: number }, delayMs = 0) {
  return async (tx: unknown) => {
    runs.n++;
    if (delayMs) await sleep(delayMs);
    await effects().insertOne({ _id: `e${++effectN}`, messageId }, { tx: tx as never });
    return runs.n;
  };
}

it('runs the work on the first delivery only, and returns its result', async () => {
  const processed = processedMessages(store, 'welcome-mail');
  const runs = { n: 0 };
  expect(await processed.once('m1', work('m1', runs))).toEqual({ firstTime: true, result: 1 });
  expect(await processed.once('m1', work('m1', runs))).toEqual({ firstTime: false });
  expect(runs.n).toBe(1);
  expect(await effects().countDocuments({ messageId: 'm1' })).toBe(1);
  expect(await processed.seen('m1')).toBe(true);
  expect(await processed.seen('m2')).toBe(false);
});

it('a concurrent double delivery does the work once', async () => {
  const processed = processedMessages(store, 'concurrent');
  const runs = { n: 0 };
  // The first holds its transaction open while the second arrives.
  const results = await Promise.all([processed.once('dup', work('dup', runs, 50)), processed.once('dup', work('dup', runs, 50))]);
  expect(results.filter((r) => r.firstTime)).toHaveLength(1);
  expect(results.filter((r) => !r.firstTime)).toHaveLength(1);
  expect(runs.n).toBe(1);
  expect(await effects().countDocuments({ messageId: 'dup' })).toBe(1);
});

it('failed work records nothing: the redelivery runs it again', async () => {
  const processed = processedMessages(store, 'flaky');
  await expect(
    processed.once('m', async (tx) => {
      await effects().insertOne({ _id: `e${++effectN}`, messageId: 'flaky' }, { tx });
      throw new Error('peer down');
    }),
  ).rejects.toThrow('peer down');
  expect(await processed.seen('m')).toBe(false);
  expect(await effects().countDocuments({ messageId: 'flaky' })).toBe(0);
  const runs = { n: 0 };
  expect(await processed.once('m', work('flaky', runs))).toEqual({ firstTime: true, result: 1 });
  expect(await effects().countDocuments({ messageId: 'flaky' })).toBe(1);
});

it('each consumer has its own ids; record answers false for a known id', async () => {
  const a = processedMessages(store, 'a');
  const b = processedMessages(store, 'b');
  expect(await a.record('same')).toBe(true);
  expect(await a.record('same')).toBe(false);
  expect(await b.seen('same')).toBe(false);
  expect(await b.record('same')).toBe(true);
  // names that could run together when joined still differ
  expect(await processedMessages(store, 'a:1').record('x')).toBe(true);
  expect(await processedMessages(store, 'a').record('1:x')).toBe(true);
  expect(() => processedMessages(store, '')).toThrow(/consumer name/);
});

it('the ids are unique per (consumer, messageId) in the collection itself', async () => {
  await processedMessages(store, 'idx').record('m');
  const raw = store.collection(PROCESSED_MESSAGES_COLLECTION, processedMessageSchema);
  await expect(raw.insertOne({ _id: 'other-id', consumer: 'idx', messageId: 'm', processedAt: new Date() } as never)).rejects.toThrow(/duplicate key/);
});

it('prune forgets ids older than the retention, of its own consumer only', async () => {
  let now = new Date('2025-01-01T00:00:00Z');
  const clock = () => now;
  const processed = processedMessages(store, 'pruned', { retentionMs: 60_000, now: clock });
  const neighbour = processedMessages(store, 'neighbour', { retentionMs: 60_000, now: clock });
  await processed.record('old');
  await neighbour.record('old');
  now = new Date('2025-01-01T00:00:50Z');
  await processed.record('recent');
  now = new Date('2025-01-01T00:01:30Z'); // 'old' is 90 s old, 'recent' 40 s
  expect(await processed.prune()).toBe(1);
  expect(await processed.seen('old')).toBe(false);
  expect(await processed.seen('recent')).toBe(true);
  expect(await neighbour.seen('old')).toBe(true);
  const runs = { n: 0 };
  expect((await processed.once('old', work('old', runs))).firstTime).toBe(true); // forgotten: processed again
});

it('pruneEvery prunes in the background until stopped', async () => {
  let now = new Date('2025-01-01T00:00:00Z');
  const processed = processedMessages(store, 'background', { retentionMs: 1_000, now: () => now });
  await processed.record('m');
  now = new Date('2025-01-01T00:00:05Z');
  const stop = processed.pruneEvery(20);
  const deadline = Date.now() + 10_000;
  while ((await processed.seen('m')) && Date.now() < deadline) await sleep(20);
  await stop();
  expect(await processed.seen('m')).toBe(false);
});

it('a message is known by its publisher id, else by its stream sequence', () => {
  expect(messageIdOf({ msgID: 'outbox-1', seq: 7 })).toBe('outbox-1');
  expect(messageIdOf({ seq: 7 })).toBe('seq:7');
});
