// Durable time (docs/architecture.md): work that is due later lives as rows in the store with an indexed due
// time, claimed with a lease so two replicas never work one row at once and a replica that dies
// lets its lease lapse. One timer per poller is armed for the next due row and re-armed earlier
// whenever a row becomes due sooner (wake). The timer holds no state: on start (after a restart
// too) the poller looks at the store at once, and again at least every MAX_SLEEP_MS for rows other
// replicas made due. Used by messaging's wait scheduler and by rss's pollers; each brings only what
// to claim and how to work a row.
import type { Logger } from './logger';
import { semaphore } from './semaphore';

/** Rows made due by another replica (its wake is not ours) are seen within this. */
const MAX_SLEEP_MS = 5_000;
/** A row that stays due (its lease held by work in progress) is looked at again after this. */
const MIN_SLEEP_MS = 200;
/** After a failed pass (the store unreachable, say) the next try comes this much later. */
const RETRY_MS = 1_000;
const DEFAULT_CLAIM_BATCH = 50;

export type WorkLimit = ReturnType<typeof semaphore>;

export interface DuePollerOptions<Row> {
  /** Names the poller in its log lines (the `poller` field, unless logFields says otherwise). */
  name: string;
  /** Claims up to `limit` rows due by `now` whose lease is free, leasing them for `leaseMs`. */
  claim(now: Date, leaseMs: number, limit: number): Promise<Row[]>;
  /** When the next row is due (leased ones included: a lease may lapse), or null. */
  nextDueAt(): Promise<Date | null>;
  /** Works one claimed row; it releases the lease itself (or lets it lapse on failure). */
  handle(row: Row): Promise<unknown>;
  leaseMs: number;
  /**
   * Rows worked at once: a number for a bound of this poller's own, or a semaphore when the bound
   * is shared with other work (messaging's wait scheduler shares AUTOMATION_RUN_CONCURRENCY with
   * the automation-run jobs).
   */
  concurrency: number | WorkLimit;
  /**
   * Rows claimed per pass (default 50). Every full batch is worked before the next claim, so no
   * lease lapses while its row waits in a queue.
   */
  claimBatch?: number;
  /**
   * Whether a pass waits for its last batch before it re-arms the timer (default true). rss's
   * rows (a feed read, an issue's send) may take long, and its own concurrency bound is per pass.
   * Messaging says false: a run resumed from a WAIT may go on for a while, and a run whose WAIT
   * falls due meanwhile must still resume within about a second, so the pass ends at once and the
   * timer goes on ticking (runs in work stay leased, so they are not claimed twice).
   */
  awaitLastBatch?: boolean;
  /**
   * Whether stop() still works the claimed rows that have not started (default false: they are
   * left to their lease, so shutdown is not held up by a queue of feed reads or sends). Messaging
   * says true: a claimed run is resumed before the replica goes, rather than a lease later, so a
   * WAIT resumes on time across a rolling restart.
   */
  finishClaimedOnStop?: boolean;
  now(): Date;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** Fields on every log line (default `{ poller: name }`); the log lines each user had are kept. */
  logFields?: Record<string, unknown>;
  /** Fields naming a row whose handling failed (default none). */
  rowLogFields?(row: Row): Record<string, unknown>;
  /** The log lines' messages (defaults: rss's wording). */
  messages?: { rowFailed?: string; passFailed?: string };
}

export interface DuePoller {
  /** A row is due at `at`: the timer fires by then. */
  wake(at: Date): void;
  /** No pass starts after this; answers once the pass and the rows in work have finished. */
  stop(): Promise<void>;
}

export function startDuePoller<Row>(opts: DuePollerOptions<Row>): DuePoller {
  const limit = typeof opts.concurrency === 'number' ? semaphore(opts.concurrency) : opts.concurrency;
  const claimBatch = opts.claimBatch ?? DEFAULT_CLAIM_BATCH;
  const awaitLastBatch = opts.awaitLastBatch ?? true;
  const logFields = opts.logFields ?? { poller: opts.name };
  const rowFailed = opts.messages?.rowFailed ?? 'due row failed; retried when its lease lapses';
  const passFailed = opts.messages?.passFailed ?? 'due poller pass failed; trying again';
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  // Rows in work, the last batch's included when the pass did not wait for it: stop() waits for them.
  const inWork = new Set<Promise<void>>();

  const arm = (at: number) => {
    if (stopped) return;
    const now = opts.now().getTime();
    const when = Math.min(Math.max(at, now + MIN_SLEEP_MS), now + MAX_SLEEP_MS);
    if (timer && when >= armedFor) return;
    if (timer) clearTimeout(timer);
    armedFor = when;
    timer = setTimeout(() => {
      timer = null;
      armedFor = Infinity;
      tick();
    }, when - now);
    timer.unref();
  };

  const work = (row: Row): Promise<void> => {
    const p = limit(async () => {
      if (stopped && !opts.finishClaimedOnStop) return;
      await opts.handle(row);
    })
      .catch((err: unknown) => opts.logger.warn({ ...logFields, ...opts.rowLogFields?.(row), err: (err as Error).message }, rowFailed))
      .finally(() => inWork.delete(p));
    inWork.add(p);
    return p;
  };

  const pass = async () => {
    for (;;) {
      const claimed = await opts.claim(opts.now(), opts.leaseMs, claimBatch);
      const full = claimed.length >= claimBatch;
      const batch = Promise.all(claimed.map(work));
      if (full || awaitLastBatch) await batch;
      if (!full || stopped) break;
    }
    const next = await opts.nextDueAt();
    arm(next ? next.getTime() : Infinity);
  };

  const tick = () => {
    if (stopped) return;
    // One pass at a time; a tick during a pass runs another pass right after it.
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => {
        opts.logger.error({ ...logFields, err: (err as Error).message }, passFailed);
        arm(opts.now().getTime() + RETRY_MS);
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          tick();
        }
      });
  };

  tick();
  return {
    wake(at) {
      arm(at.getTime());
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.allSettled([...inWork]);
    },
  };
}
