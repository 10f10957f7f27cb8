/**
 * Read-after-write for a consumer's local view: the applied watermark (contiguous progress over
 * handlers that finish out of order) and waiting on it with the durable consumer's ack floor.
 */
import { NatsConnection } from 'nats';
import { startNatsServer, NatsServerHandle } from '../../testing/src/nats';
import { connectNats, publish, readAfterWrite, runConsumer, type ConsumerHandle, type ReadAfterWrite } from '../src';
import { AppliedWatermark } from '../src/watermark';
import { freshStream, waitFor } from './helpers';

describe('AppliedWatermark', () => {
  it('advances only over a contiguous prefix when sequences complete out of order', () => {
    const w = new AppliedWatermark();
    w.complete(3);
    w.complete(2);
    expect(w.value).toBe(0);
    expect(w.held).toBe(2);
    w.complete(1);
    expect(w.value).toBe(3);
    expect(w.held).toBe(0);
    w.complete(5);
    expect(w.value).toBe(3);
    w.complete(4);
    expect(w.value).toBe(5);
  });

  it('ignores repeats and sequences at or below the watermark (redeliveries)', () => {
    const w = new AppliedWatermark(10);
    w.complete(10);
    w.complete(7);
    w.complete(11);
    w.complete(11);
    expect(w.value).toBe(11);
    expect(w.held).toBe(0);
  });

  it('raiseFloor closes gaps the consumer never sees (ack floor) and keeps what was done above it', () => {
    const w = new AppliedWatermark();
    w.complete(6);
    w.complete(8);
    w.complete(2);
    w.raiseFloor(4); // 1..4 handled elsewhere (an earlier run, another replica, a deleted message)
    expect(w.value).toBe(4);
    w.complete(5);
    expect(w.value).toBe(6);
    w.raiseFloor(7);
    expect(w.value).toBe(8);
    expect(w.held).toBe(0);
    w.raiseFloor(3); // never lowers
    expect(w.value).toBe(8);
  });

  it('random completion orders always end at the highest sequence', () => {
    for (let run = 0; run < 50; run++) {
      const seqs = Array.from({ length: 200 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      const w = new AppliedWatermark();
      const done = new Set<number>();
      for (const s of seqs) {
        w.complete(s);
        done.add(s);
        let expected = 0;
        while (done.has(expected + 1)) expected++;
        expect(w.value).toBe(expected);
      }
      expect(w.value).toBe(200);
    }
  });

  it('wait resolves when the gap closes, and false after the timeout', async () => {
    const w = new AppliedWatermark();
    w.complete(2);
    const waiting = w.wait(2, 5_000);
    const tooFar = w.wait(3, 50);
    setTimeout(() => w.complete(1), 20);
    expect(await waiting).toBe(true);
    expect(await tooFar).toBe(false);
    expect(await w.wait(2, 0)).toBe(true);
    expect(await w.wait(9, 0)).toBe(false);
  });
});

describe('readAfterWrite on a real JetStream consumer', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  const stops: Array<() => unknown> = [];

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ url: server.url, name: 'watermark-test', ...server.auth });
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  async function publishMany(subject: string, n: number): Promise<void> {
    const js = nc.jetstream();
    for (let i = 0; i < n; i++) await publish(js, subject, { i });
  }

  function consume(stream: string, durable: string, handler: (seq: number) => void): ConsumerHandle {
    const h = runConsumer(nc, { stream, durable, handler: async (msg) => (handler(msg.seq), 'ack') });
    stops.push(() => h.stop());
    return h;
  }

  function reads(stream: string, durable: string): ReadAfterWrite {
    const r = readAfterWrite({ nc, stream, durable });
    stops.push(() => r.stop());
    return r;
  }

  it('the tail is the stream\'s last sequence; a read waits until the local handlers applied it', async () => {
    const { name, subject } = await freshStream(nc);
    const r = reads(name, 'view');
    expect(await r.streamTail()).toBe(0);
    await publishMany(subject('a'), 5);
    const tail = await r.streamTail();
    expect(tail).toBe(5);
    const waiting = r.waitForSequence(tail, 10_000);
    consume(name, 'view', (seq) => r.watermark.complete(seq));
    expect(await waiting).toBe(true);
    expect(r.watermark.value).toBe(5);
    expect(await r.waitForSequence(6, 100)).toBe(false); // nothing published there yet: times out
  });

  it('messages applied elsewhere (another replica, an earlier run) count through the ack floor', async () => {
    const { name, subject } = await freshStream(nc);
    await publishMany(subject('a'), 4);
    let applied = 0;
    consume(name, 'shared', () => void applied++); // this handler never tells our watermark
    await waitFor('the other consumer', () => applied === 4, 10_000);
    const r = reads(name, 'shared');
    expect(r.watermark.value).toBe(0);
    expect(await r.waitForSequence(4, 10_000)).toBe(true);
    expect(r.watermark.value).toBe(4);
  });

  it('a consumer that does not exist yet is no error: the wait times out with false', async () => {
    const { name, subject } = await freshStream(nc);
    await publishMany(subject('a'), 1);
    const r = reads(name, 'nobody');
    expect(await r.waitForSequence(1, 200)).toBe(false);
  });
});
