// Per-account send rate (MAIL_ACCOUNT_RATE_PER_SECOND, per replica): a token bucket per account
// holding at most one second of sends. A send takes a token; when none is left it may reserve the
// next one (the bucket goes below zero) if that comes soon enough, else it is told how long to wait
// and the job comes back later: over the rate is delayed, never dropped.

export interface RateDecision {
  /** Wait this long before sending (0: now). */
  waitMs: number;
  /** True when a token was taken (send after waitMs); false: nothing taken, try again after waitMs. */
  reserved: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

// Buckets of accounts that sent nothing for a while are full again and can be forgotten.
const PRUNE_ABOVE = 10_000;

export class AccountSendRate {
  private readonly buckets = new Map<string, Bucket>();
  private readonly burst: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(perSecond > 0)) throw new Error(`send rate must be > 0, got ${perSecond}`);
    this.burst = Math.max(1, perSecond);
  }

  /** Takes a token for one send of the account, reserving one up to `maxWaitMs` ahead. */
  take(accountId: string, maxWaitMs: number): RateDecision {
    const now = this.now();
    const bucket = this.refill(accountId, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { waitMs: 0, reserved: true };
    }
    const waitMs = Math.ceil(((1 - bucket.tokens) * 1000) / this.perSecond);
    if (waitMs > maxWaitMs) return { waitMs, reserved: false };
    bucket.tokens -= 1;
    return { waitMs, reserved: true };
  }

  private refill(accountId: string, now: number): Bucket {
    let bucket = this.buckets.get(accountId);
    if (!bucket) {
      if (this.buckets.size >= PRUNE_ABOVE) this.prune(now);
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(accountId, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.perSecond) / 1000);
    bucket.at = now;
    return bucket;
  }

  private prune(now: number): void {
    for (const [accountId, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * this.perSecond) / 1000 >= this.burst) this.buckets.delete(accountId);
    }
  }
}
