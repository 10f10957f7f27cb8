import { KvConflict, type JsonKv } from '../kv/json-kv';
import { decide, type Decision, type GcraState, type Limit } from './gcra';

/**
 * Rate-limit budgets shared by every gateway replica: one KV entry per bucket and subject
 * (account or client address) holding the GCRA state, updated with compare-and-set on its
 * revision. A rejected request writes nothing, so it consumes nothing.
 *
 * Requests of one process for the same entry are queued behind each other (a per-key promise
 * chain): compare-and-set conflicts then only arise between replicas, not between the many
 * concurrent requests one replica is serving.
 */
export class RateLimiter {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kv: JsonKv,
    private readonly now: () => number = Date.now,
    private readonly maxAttempts = 20,
  ) {}

  /** Decides and, when allowed, records the request. */
  consume(key: string, limits: Limit[]): Promise<Decision> {
    return this.serialised(key, () => this.consumeNow(key, limits));
  }

  /** Decides without recording anything (would a request be allowed right now?). */
  async peek(key: string, limits: Limit[]): Promise<Decision> {
    const entry = await this.kv.get<GcraState>(key);
    return decide(limits, entry?.value ?? {}, this.now());
  }

  private async consumeNow(key: string, limits: Limit[]): Promise<Decision> {
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const entry = await this.kv.get<GcraState>(key);
      const decision = decide(limits, entry?.value ?? {}, this.now());
      if (!decision.allowed) return decision;
      try {
        if (entry) await this.kv.update(key, decision.state, entry.revision);
        else await this.kv.create(key, decision.state);
        return decision;
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
        // Another replica spent budget in between: back off a little, re-read, decide again.
        await new Promise((r) => setTimeout(r, Math.random() * 2 * (attempt + 1)));
      }
    }
    throw new Error(`rate limit state ${key} is too contended`);
  }

  private serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return result;
  }
}

/** KV keys of the budgets: per account and bucket, and per client address for unauthenticated requests. */
export const accountBudgetKey = (bucket: 'default' | 'events', accountId: string) => `account.${accountId}.${bucket}`;
export const addressBudgetKey = (address: string) =>
  // One KV key token: dots and IPv6 colons (and anything odd a proxy may pass) become '_'.
  `address.${address.replace(/[^A-Za-z0-9-]/g, '_').slice(0, 100) || 'unknown'}`;
