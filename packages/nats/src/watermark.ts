/**
 * Read-after-write for a durable JetStream consumer that applies messages to a local view (a
 * projection): how far it has applied every message (AppliedWatermark), and waiting until it has
 * applied everything up to a stream sequence (readAfterWrite). A service that answers reads from
 * its view reads the stream's tail (`streamTail`) when a read starts and waits for it, so a write
 * published before the read is visible in the answer.
 */
import type { JetStreamManager, NatsConnection } from 'nats';

/**
 * The highest stream sequence at or below which every message has been handled (applied or
 * deliberately skipped). Handlers finish out of order (concurrency > 1), so completed sequences above
 * the watermark are held until the gap below them closes. Sequences the consumer never sees here
 * (deleted messages, messages handled by another replica sharing the durable, messages terminated by
 * runConsumer before the handler) are covered by raiseFloor() with the durable consumer's ack floor.
 */
export class AppliedWatermark {
  private floor: number;
  private readonly done = new Set<number>();
  private waiters: Array<{ seq: number; resolve: () => void }> = [];

  constructor(initial = 0) {
    this.floor = initial;
  }

  get value(): number {
    return this.floor;
  }

  /** Sequences completed above the watermark, waiting for a gap below them (for tests and metrics). */
  get held(): number {
    return this.done.size;
  }

  complete(seq: number): void {
    if (!(seq > this.floor)) return;
    this.done.add(seq);
    this.advance();
  }

  /** Everything at or below `seq` is known to be handled (e.g. the consumer's ack floor). */
  raiseFloor(seq: number): void {
    if (!(seq > this.floor)) return;
    this.floor = seq;
    for (const s of this.done) if (s <= seq) this.done.delete(s);
    this.advance();
  }

  /** Resolves when the watermark reaches `seq`: true, or false after `timeoutMs`. */
  wait(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.floor >= seq) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private advance(): void {
    while (this.done.delete(this.floor + 1)) this.floor++;
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.seq <= this.floor);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.seq > this.floor);
    for (const w of ready) w.resolve();
  }
}

export interface ReadAfterWriteOptions {
  nc: NatsConnection;
  stream: string;
  /** The durable consumer whose handlers call `watermark.complete(seq)` after applying `seq`. */
  durable: string;
  /** While a read waits, how often the consumer's ack floor is read from the server. Default 50 ms. */
  syncMs?: number;
  /** In the background, how often the ack floor is read (bounds the sequences held above a gap). Default 5 s. */
  backgroundSyncMs?: number;
}

export interface ReadAfterWrite {
  /** The applied watermark: the consumer's handlers call `complete(seq)` once a message is applied or skipped. */
  readonly watermark: AppliedWatermark;
  /**
   * Waits until every message up to `seq` is applied (or deliberately skipped): true, or false
   * after `timeoutMs`. The local watermark answers at once when it is there; otherwise the durable
   * consumer's ack floor is read every `syncMs` (it covers gaps and other replicas' work).
   */
  waitForSequence(seq: number, timeoutMs: number): Promise<boolean>;
  /** The stream's last sequence now: what a read must wait for to see every published write. */
  streamTail(): Promise<number>;
  /** Stops the background ack-floor reads. */
  stop(): void;
}

export function readAfterWrite(opts: ReadAfterWriteOptions): ReadAfterWrite {
  const syncMs = opts.syncMs ?? 50;
  const watermark = new AppliedWatermark();
  let jsmPromise: Promise<JetStreamManager> | undefined;
  const jsm = () =>
    (jsmPromise ??= opts.nc.jetstreamManager().catch((err) => {
      jsmPromise = undefined;
      throw err;
    }));
  /** Raises the watermark to the durable consumer's ack floor; false when it cannot be read now. */
  async function syncFromServer(): Promise<boolean> {
    try {
      const info = await (await jsm()).consumers.info(opts.stream, opts.durable);
      watermark.raiseFloor(info.ack_floor.stream_seq);
      return true;
    } catch {
      return false; // consumer not created yet, or NATS unreachable: the local watermark still counts
    }
  }
  let synced = false;
  const background = setInterval(() => void syncFromServer().then((ok) => (synced ||= ok)), opts.backgroundSyncMs ?? 5_000);
  background.unref();
  return {
    watermark,
    async waitForSequence(seq, timeoutMs) {
      if (watermark.value >= seq) return true;
      const deadline = Date.now() + timeoutMs;
      // Until the ack floor was read once, the local watermark starts from 0 and cannot pass the
      // messages a previous run applied: read it right away.
      if (!synced) synced = await syncFromServer();
      while (watermark.value < seq) {
        const left = deadline - Date.now();
        if (left <= 0) return false;
        if (await watermark.wait(seq, Math.min(syncMs, left))) return true;
        synced = (await syncFromServer()) || synced;
      }
      return true;
    },
    async streamTail() {
      return (await (await jsm()).streams.info(opts.stream)).state.last_seq;
    },
    stop() {
      clearInterval(background);
    },
  };
}
