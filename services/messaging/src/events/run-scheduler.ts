// The wait scheduler (DESIGN.md "Durable time"): waiting runs are rows with a due time (indexed); one
// timer in the process is armed for the next due one and re-armed whenever a run starts waiting, so
// a WAIT resumes within about a second of its due time. Due runs are claimed with a lease (two
// replicas never resume one twice; a replica that dies mid-run lets the lease lapse) and resumed by
// the run executor. The timer holds no state: on start (after a restart too) it looks at the store
// at once, and it looks again at least every MAX_SLEEP_MS for runs other replicas set waiting.
import type { Logger, semaphore } from '@mailer/kit';
import type { Collection } from '@mailer/store';
import { runAutomation, type RunAutomationDeps } from '../app/run-automation';
import { dueRuns, type RunDoc } from '../store/runs';

const LEASE_MS = 60_000;
/** Runs claimed per pass; the pass resumes them before claiming more, so no lease lapses in a queue. */
const CLAIM_BATCH = 200;
const MAX_SLEEP_MS = 5_000;
/** A due run that stays due (its lease held by a run in work) is looked at again after this. */
const MIN_SLEEP_MS = 200;

export interface RunSchedulerOptions {
  runs: Collection<RunDoc>;
  deps: RunAutomationDeps;
  limit: ReturnType<typeof semaphore>;
  now: () => Date;
  logger: Pick<Logger, 'warn' | 'error' | 'debug'>;
}

export interface RunScheduler {
  /** A run waits until `dueAt`: the timer fires by then. */
  wake(dueAt: Date): void;
  stop(): Promise<void>;
}

export function startRunScheduler(opts: RunSchedulerOptions): RunScheduler {
  const due = dueRuns(opts.runs);
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const inWork = new Set<Promise<unknown>>();

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

  const pass = async () => {
    for (;;) {
      const claimed = await due.claim(opts.now(), LEASE_MS, CLAIM_BATCH);
      const batch = claimed.map((run) => {
        const p = opts
          .limit(() => runAutomation(opts.deps, { accountId: run.accountId, runId: run._id }))
          .catch((err: unknown) => opts.logger.warn({ runId: run._id, err: (err as Error).message }, 'resuming a waiting run failed; retried when its lease lapses'))
          .finally(() => inWork.delete(p));
        inWork.add(p);
        return p;
      });
      if (claimed.length < CLAIM_BATCH || stopped) break;
      await Promise.all(batch);
    }
    const next = await due.nextDueAt();
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
        opts.logger.error({ err: (err as Error).message }, 'wait scheduler pass failed; trying again');
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
    wake(dueAt) {
      arm(dueAt.getTime());
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.allSettled([...inWork]);
    },
  };
}
