import { performance } from 'node:perf_hooks';
import type { KV, QueuedIterator, KvEntry } from 'nats';

const LOAD_TIMEOUT_MS = 30_000;

/**
 * A local copy of a KV bucket (or of the keys under one prefix), kept current by a JetStream watch,
 * so that the hot path reads memory instead of making a round trip per request.
 *
 * A watch alone is only eventually current. For the accounts bucket the gateway needs more: a key
 * rotated or deleted must be refused by every replica for every request that starts after the
 * change returned. That is what the lease gives (`leaseMs` > 0, whole bucket only):
 *
 *   - Every leaseMs/3 the view asks the server for the bucket's last sequence S (started at local
 *     time t0), waits until the watch has applied everything up to S, and then trusts itself until
 *     t0 + leaseMs. Any write acknowledged before t0 has a sequence <= S, so it is in the copy.
 *   - A writer that must be seen everywhere waits `settleMs` (leaseMs plus a margin) after its
 *     write before it returns (AccountStore does, for rotate/delete/limits). A replica whose lease
 *     was taken before the write has lost it by then; one taken after has the write.
 *   - `fresh()` false (lease lapsed: NATS slow or unreachable, the watch lagging) sends callers back
 *     to direct reads, so a stalled replica degrades to being slow, never to being wrong.
 *   - Renewal pauses while nobody asks (no `fresh()` call in a whole renewal period) and resumes at
 *     the next ask: an idle replica makes no round trips (each one cost the gateway ~1 ms CPU and
 *     NATS ~0.5 ms, 10 a second at the default lease). The first request after a long pause reads
 *     the bucket directly while the lease is taken again.
 *
 * Every replica must run with the same leaseMs (one setting in the chart).
 */
export class WatchedKv<T> {
  private readonly entries = new Map<string, { value: T; revision: number }>();
  /** Highest stream sequence the watch has applied. */
  private applied = 0;
  private readonly waiting: Array<{ seq: number; resolve: (reached: boolean) => void }> = [];
  private leaseUntil = 0;
  private renewTimer: NodeJS.Timeout | undefined;
  /** `fresh()` was called since the current renewal period began. */
  private asked = false;
  /** Renewal paused for want of asks (see the class comment); the next `fresh()` resumes it. */
  private paused = false;
  private closed = false;

  private watch: QueuedIterator<KvEntry> | undefined;
  /** Bumped by every (re)start, so that a stopped watch's late entries are ignored. */
  private generation = 0;

  private constructor(
    private readonly kv: KV,
    private readonly key: string,
    private readonly leaseMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * Opens the view and resolves once the bucket's current content is loaded. `key` is a KV key
   * filter ('>' for the whole bucket); a lease needs the whole bucket, since the last sequence it
   * compares with counts every key's writes.
   */
  static async open<T>(kv: KV, opts: { key: string; leaseMs?: number; onError: (err: unknown) => void }): Promise<WatchedKv<T>> {
    const leaseMs = opts.leaseMs ?? 0;
    if (leaseMs > 0 && opts.key !== '>') throw new Error('a lease needs a view of the whole bucket');
    const view = new WatchedKv<T>(kv, opts.key, leaseMs, opts.onError);
    await view.restart();
    return view;
  }

  /**
   * Drops the copy and loads the bucket again through a new watch. Called after NATS came back: the
   * bucket may have been re-created empty (memory storage), with sequences starting over, which an
   * existing watch would neither notice nor follow. The lease lapses until the new copy is loaded.
   */
  async restart(): Promise<void> {
    const generation = ++this.generation;
    this.leaseUntil = 0;
    clearTimeout(this.renewTimer);
    this.paused = false;
    this.watch?.stop();
    this.entries.clear();
    this.applied = 0;
    // Sequences waited for belong to the old watch (and maybe to a bucket that no longer exists).
    for (const w of this.waiting.splice(0)) w.resolve(false);
    let initialized!: () => void;
    const loaded = new Promise<void>((resolve) => (initialized = resolve));
    const watch = await this.kv.watch({ key: this.key, initializedFn: () => initialized() });
    if (this.closed || generation !== this.generation) {
      watch.stop();
      return;
    }
    this.watch = watch;
    void this.follow(watch, generation);
    // A connection lost during the load would leave it pending for good; the caller retries instead.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`watch of ${this.key} did not load within ${LOAD_TIMEOUT_MS} ms`)), LOAD_TIMEOUT_MS);
    });
    try {
      await Promise.race([loaded, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (this.leaseMs > 0 && generation === this.generation) await this.renew(generation);
  }

  /** True while the view is known to hold every write acknowledged before the current lease began. */
  fresh(): boolean {
    this.asked = true;
    if (this.paused) {
      this.paused = false;
      void this.renew(this.generation);
    }
    return performance.now() < this.leaseUntil;
  }

  /** How long a writer waits after its write so that every replica's view has it or no longer trusts itself. */
  get settleMs(): number {
    return this.leaseMs === 0 ? 0 : Math.ceil(this.leaseMs * 1.1) + 50;
  }

  get(key: string): { value: T; revision: number } | undefined {
    return this.entries.get(key);
  }

  /**
   * Records a write this process just made, so its own next read sees it without waiting for the
   * watch to echo it (which it will; the newer revision wins either way).
   */
  wrote(key: string, value: T, revision: number): void {
    if (this.covers(key) && (this.entries.get(key)?.revision ?? 0) < revision) this.entries.set(key, { value, revision });
  }

  /** Whether `key` is one the view follows (its key filter: `>`, `prefix.>` or `prefix.*`). */
  covers(key: string): boolean {
    if (this.key === '>') return true;
    const prefix = this.key.slice(0, -1);
    if (!key.startsWith(prefix) || key.length === prefix.length) return false;
    return this.key.endsWith('>') || !key.includes('.', prefix.length);
  }

  /** Forgets local entries the predicate rejects (for buckets whose entries expire by TTL, which a watch does not report). */
  prune(keep: (value: T) => boolean): void {
    for (const [key, entry] of this.entries) if (!keep(entry.value)) this.entries.delete(key);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.renewTimer);
    this.watch?.stop();
  }

  private async follow(watch: QueuedIterator<KvEntry>, generation: number): Promise<void> {
    try {
      for await (const e of watch) {
        if (generation !== this.generation) break;
        if (e.operation === 'PUT' && e.length > 0) this.wrote(e.key, JSON.parse(e.string()) as T, e.revision);
        else if ((this.entries.get(e.key)?.revision ?? 0) < e.revision) this.entries.delete(e.key);
        if (e.revision > this.applied) this.applied = e.revision;
        while (this.waiting.length > 0 && this.waiting[0].seq <= this.applied) this.waiting.shift()!.resolve(true);
      }
    } catch (err) {
      // The watch ended abnormally: the lease lapses on its own and readers go back to the store.
      if (!this.closed && generation === this.generation) this.onError(err);
    }
  }

  private async renew(generation: number): Promise<void> {
    try {
      const started = performance.now();
      const last = (await this.kv.status()).streamInfo.state.last_seq;
      if ((await this.reached(last, this.leaseMs)) && generation === this.generation) this.leaseUntil = started + this.leaseMs;
    } catch (err) {
      this.onError(err);
    } finally {
      // A restart began its own renewal cycle; this one ends here.
      if (!this.closed && generation === this.generation) {
        if (this.asked) this.renewTimer = setTimeout(() => void this.renew(generation), this.leaseMs / 3).unref();
        else this.paused = true;
        this.asked = false;
      }
    }
  }

  /** Resolves true once the watch applied `seq`, false after `timeoutMs`. */
  private reached(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.applied >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      // Sequences are requested in increasing order, so the queue stays sorted.
      this.waiting.push({
        seq,
        resolve: (reached) => {
          clearTimeout(timer);
          resolve(reached);
        },
      });
    });
  }
}
