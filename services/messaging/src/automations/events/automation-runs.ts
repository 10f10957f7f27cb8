// Automation runs: a durable pull consumer on JOBS `jobs.automation-run.>` (explicit ack, at most
// AUTOMATION_RUN_CONCURRENCY runs in work) shaped parse -> use case -> ack | term. A thrown error (the
// store, a peer not answering) is retried with the backoff; the run record makes every retry safe
// (app/run-automation.ts). The wait scheduler (events/run-scheduler.ts) resumes waiting runs.
import type { NatsConnection } from 'nats';
import type { Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle, type HandlerResult } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import { runAutomation, type RunAutomationDeps } from '../app/run-automation';
import { NATS_ACCESS } from '../../nats-access';
import { semaphore } from '@mailer/kit';

const BATCHES_IN_FLIGHT = 4;

export interface AutomationRunsOptions {
  nc: NatsConnection;
  deps: RunAutomationDeps;
  /** Shared with the wait scheduler: runs in work at once. */
  limit: ReturnType<typeof semaphore>;
  batchSize: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  outcomes?: { inc(labels: { outcome: string }): void };
}

export function startAutomationRuns(opts: AutomationRunsOptions): ConsumerHandle {
  const { logger } = opts;
  const count = (outcome: string) => opts.outcomes?.inc({ outcome: outcome.toLowerCase() });
  const handle = async (msg: ConsumedMessage): Promise<HandlerResult> => {
    let job;
    try {
      job = parseJob('automation-run', msg.data);
    } catch (err) {
      if (!(err instanceof MalformedFactError)) throw err;
      logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed automation-run job');
      count('malformed');
      return 'term';
    }
    if (msg.subject !== `jobs.automation-run.${job.accountId}`) {
      logger.error({ seq: msg.seq, subject: msg.subject }, 'terminating automation-run job whose accountId does not match its subject');
      count('malformed');
      return 'term';
    }
    const result = await runAutomation(opts.deps, job);
    count(result);
    if (result === 'UNKNOWN_RUN') logger.warn({ accountId: job.accountId, runId: job.runId }, 'automation-run job for an unknown run; dropped');
    return 'ack';
  };
  return runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.automationRuns,
    concurrency: BATCHES_IN_FLIGHT,
    batchSize: Math.max(1, opts.batchSize),
    maxDeliver: 300,
    backoffMs: [1_000, 5_000, 30_000, 60_000, 300_000],
    ackWaitMs: 60_000,
    log: (msg, extra) => logger.warn(extra ?? {}, msg),
    batchHandler: (msgs) => Promise.all(msgs.map((m): Promise<BatchHandlerResult> => opts.limit(() => handle(m)).catch((error: unknown) => ({ error })))),
  });
}
