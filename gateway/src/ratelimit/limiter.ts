import { KvConflict, type JsonKv } from '../kv/json-kv';
import type { WatchedKv } from '../kv/watched-kv';
import { decide, stateMatters, type Decision, type Limit, type LimitState } from './decide';

/**
 * Rate-limit budgets shared by every gateway replica: one KV entry per bucket and subject
 * (account or client address) holding the state of its limits (decide.ts), updated with compare-and-set on its
 * revision. A rejected request writes nothing, so it consumes nothing.
 *
 * Under load many requests of one process hit the same entry at once. They are decided in
 * batches: while one compare-and-set is in flight, newcomers queue, and the next round decides
 * every queued request against the evolving state and records them all in ONE write. The last
 * written entry (value + revision) is kept, so a round usually needs no read either: a replica's
 * throughput is not bounded by KV round trips, and a conflict (another replica wrote) only costs a
 * re-read. Every allowed request is durably recorded before it is answered: budgets stay exact.
 */
interface Waiter {
  limits: Limit[];
  resolve(decision: Decision): void;
  reject(err: unknown): void;
}

type Entry = { value: LimitState; revision: number };

const MAX_CACHED_ENTRIES = 10_000;

export class RateLimiter {
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly draining = new Set<string>();
  private readonly lastWritten = new Map<string, Entry>();

  constructor(
    private readonly kv: JsonKv,
    private readonly now: () => number = Date.now,
    private readonly maxAttempts = 20,
    /**
     * A watched copy of the budgets `peek` reads (the per-address ones). Peeking is only the early
     * refusal of an address that used up its budget, so a copy a few milliseconds behind other
     * replicas is good enough, and it saves a round trip on every authenticated request.
     */
    private readonly peekView?: WatchedKv<LimitState>,
  ) {}

  /** Decides and, when allowed, records the request. */
  consume(key: string, limits: Limit[]): Promise<Decision> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push({ limits, resolve, reject });
      else this.waiting.set(key, [{ limits, resolve, reject }]);
      if (!this.draining.has(key)) void this.drain(key);
    });
  }

  /** Decides without recording anything (would a request be allowed right now?). */
  async peek(key: string, limits: Limit[]): Promise<Decision> {
    const entry = this.peekView ? this.peekView.get(key) : await this.kv.get<LimitState>(key);
    return decide(limits, entry?.value ?? {}, this.now());
  }

  /**
   * Forgets the entries (and revisions) this replica last wrote: after NATS lost the memory-stored
   * bucket, revisions restart from 1 and a cached one could match another replica's newer write.
   */
  forgetCache(): void {
    this.lastWritten.clear();
  }

  /** Drops copied budgets that have fully refilled (the bucket's TTL removes them without telling the watch). */
  pruneView(): void {
    const now = this.now();
    this.peekView?.prune((state) => stateMatters(state, now));
  }

  private async drain(key: string): Promise<void> {
    this.draining.add(key);
    try {
      for (let batch = this.waiting.get(key); batch?.length; batch = this.waiting.get(key)) {
        this.waiting.delete(key);
        try {
          const decisions = await this.decideBatch(key, batch);
          batch.forEach((w, i) => w.resolve(decisions[i]));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.draining.delete(key);
    }
  }

  private async decideBatch(key: string, batch: Waiter[]): Promise<Decision[]> {
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      // A budget this replica has not written lately is first guessed, not read: the watched copy's
      // entry, else none (most such budgets are new: a reader's first page, an account's first request
      // since the start). The compare-and-set refuses a wrong guess, and the retry reads the store.
      const entry = this.lastWritten.get(key) ?? (attempt === 0 ? this.peekView?.get(key) ?? null : await this.kv.get<LimitState>(key));
      const now = this.now();
      let state = entry?.value ?? {};
      const decisions = batch.map((w) => {
        const decision = decide(w.limits, state, now);
        if (decision.allowed) state = decision.state;
        return decision;
      });
      if (!decisions.some((d) => d.allowed)) return decisions;
      try {
        const revision = entry ? await this.kv.update(key, state, entry.revision) : await this.kv.create(key, state);
        this.remember(key, { value: state, revision });
        this.peekView?.wrote(key, state, revision);
        return decisions;
      } catch (err) {
        this.lastWritten.delete(key);
        if (!(err instanceof KvConflict)) throw err;
        // Another replica spent budget in between (or the entry expired): re-read, decide again.
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * 2 * attempt));
      }
    }
    throw new Error(`rate limit state ${key} is too contended`);
  }

  private remember(key: string, entry: Entry): void {
    this.lastWritten.delete(key);
    if (this.lastWritten.size >= MAX_CACHED_ENTRIES) this.lastWritten.delete(this.lastWritten.keys().next().value!);
    this.lastWritten.set(key, entry);
  }
}

/** KV keys of the budgets: per account and bucket, and per client address for unauthenticated requests. */
// The default budget's sliding-window state lives under `.api`: gateways before the windows kept GCRA
// state under `.default`, and during a rolling deploy neither version may read the other's state (an
// old replica reading window slots computed NaN and admitted everything).
export const accountBudgetKey = (bucket: 'default' | 'events', accountId: string) => `account.${accountId}.${bucket === 'default' ? 'api' : bucket}`;
export const addressBudgetKey = (address: string) =>
  // One KV key token: dots and IPv6 colons (and anything odd a proxy may pass) become '_'.
  `address.${address.replace(/[^A-Za-z0-9-]/g, '_').slice(0, 100) || 'unknown'}`;
