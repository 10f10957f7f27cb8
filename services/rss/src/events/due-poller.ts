// Durable time (DESIGN.md): due rows in the store (newsletters to poll or tick, review issues to
// auto-release) with an indexed due time, claimed with a lease so two replicas never work one row at
// once and a replica that dies lets its lease lapse. One timer per poller is armed for the next due
// row; it holds no state: on start (after a restart too) it looks at the store at once, and again at
// least every MAX_SLEEP_MS for rows other replicas made due. Modelled on messaging's run scheduler.
import type { Logger } from '@mailer/kit';

const MAX_SLEEP_MS = 5_000;
const MIN_SLEEP_MS = 200;
const CLAIM_BATCH = 50;

export interface DuePollerOptions<Row> {
  name: string;
  claim(now: Date, leaseMs: number, limit: number): Promise<Row[]>;
  nextDueAt(): Promise<Date | null>;
  /** Works one claimed row; it releases the lease itself (or lets it lapse on failure). */
  handle(row: Row): Promise<void>;
  leaseMs: number;
  /** Rows worked at once. */
  concurrency: number;
  now(): Date;
  logger: Pick<Logger, 'warn' | 'error'>;
}

export interface DuePoller {
  /** A row is due at `at`: the timer fires by then. */
  wake(at: Date): void;
  stop(): Promise<void>;
}

export function startDuePoller<Row>(opts: DuePollerOptions<Row>): DuePoller {
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

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

  const work = async (rows: Row[]) => {
    let next = 0;
    const lane = async () => {
      while (next < rows.length && !stopped) {
        const row = rows[next++];
        await opts.handle(row).catch((err: unknown) => opts.logger.warn({ poller: opts.name, err: (err as Error).message }, 'due row failed; retried when its lease lapses'));
      }
    };
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, rows.length) }, lane));
  };

  const pass = async () => {
    for (;;) {
      const claimed = await opts.claim(opts.now(), opts.leaseMs, CLAIM_BATCH);
      await work(claimed);
      if (claimed.length < CLAIM_BATCH || stopped) break;
    }
    const next = await opts.nextDueAt();
    arm(next ? next.getTime() : Infinity);
  };

  const tick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => {
        opts.logger.error({ poller: opts.name, err: (err as Error).message }, 'due poller pass failed; trying again');
        arm(opts.now().getTime() + 1_000);
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
    },
  };
}
