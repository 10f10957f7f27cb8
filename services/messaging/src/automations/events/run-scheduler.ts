// The wait scheduler (docs/architecture.md "Durable time"): waiting runs are rows with a due time (indexed); one
// timer in the process is armed for the next due one and re-armed whenever a run starts waiting, so
// a WAIT resumes within about a second of its due time. Due runs are claimed with a lease (two
// replicas never resume one twice; a replica that dies mid-run lets the lease lapse) and resumed by
// the run executor. The timer, the lease and the loop are the kit's due poller; here is what to claim
// and how to resume a run.
import { startDuePoller, type DuePoller, type Logger, type semaphore } from '@mailer/kit';
import type { Collection } from '@mailer/store';
import { runAutomation, type RunAutomationDeps } from '../app/run-automation';
import { dueRuns, type RunDoc } from '../store/runs';

const LEASE_MS = 60_000;
/** Runs claimed per pass; the pass resumes them before claiming more, so no lease lapses in a queue. */
const CLAIM_BATCH = 200;

export interface RunSchedulerOptions {
  runs: Collection<RunDoc>;
  deps: RunAutomationDeps;
  limit: ReturnType<typeof semaphore>;
  now: () => Date;
  logger: Pick<Logger, 'warn' | 'error' | 'debug'>;
}

/** wake(dueAt): a run waits until `dueAt`, the timer fires by then. */
export type RunScheduler = DuePoller;

export function startRunScheduler(opts: RunSchedulerOptions): RunScheduler {
  const due = dueRuns(opts.runs);
  return startDuePoller<RunDoc>({
    name: 'wait-scheduler',
    claim: due.claim,
    nextDueAt: due.nextDueAt,
    handle: (run) => runAutomation(opts.deps, { accountId: run.accountId, runId: run._id }),
    leaseMs: LEASE_MS,
    claimBatch: CLAIM_BATCH,
    // One bound with the automation-run jobs (AUTOMATION_RUN_CONCURRENCY).
    concurrency: opts.limit,
    // A long resumed run must not hold up the next WAIT that falls due: resume within ~1 s.
    awaitLastBatch: false,
    // Claimed runs are resumed before the replica goes, not a 60 s lease later.
    finishClaimedOnStop: true,
    now: opts.now,
    logger: opts.logger,
    logFields: {},
    rowLogFields: (run) => ({ runId: run._id }),
    messages: {
      rowFailed: 'resuming a waiting run failed; retried when its lease lapses',
      passFailed: 'wait scheduler pass failed; trying again',
    },
  });
}
