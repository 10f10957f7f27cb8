// The submission job's consumer: a durable pull consumer on JOBS `jobs.form-submission.>` (explicit
// ack, at most FORM_SUBMISSION_CONCURRENCY jobs in flight) shaped parse -> use case -> ack | term:
// a job that does not parse is terminated; a thrown error (a peer down, the store failing, the mail
// refused) is retried with the backoff. The submission record makes every retry safe.
import type { Logger } from '@mailer/kit';
import { runConsumer, type ConsumedMessage, type ConsumerHandle, type HandlerResult, type NatsConnection } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import { decideSubmission, type DecideSubmissionDeps } from '../app/decide-submission';
import { NATS_ACCESS } from '../nats-access';

/** A job whose handler keeps failing (a peer down for hours) is given up after about a day. */
export const SUBMISSION_JOBS_MAX_DELIVER = 300;

export function submissionJobHandler(deps: DecideSubmissionDeps, logger: Pick<Logger, 'warn' | 'error' | 'info'>) {
  return async (msg: ConsumedMessage): Promise<HandlerResult> => {
    let job;
    try {
      job = parseJob('form-submission', msg.data);
    } catch (err) {
      if (!(err instanceof MalformedFactError)) throw err;
      logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed form-submission job');
      return 'term';
    }
    const result = await decideSubmission(deps, job);
    if (result.outcome === 'UNKNOWN_SUBMISSION') logger.warn({ accountId: job.accountId, submissionId: job.submissionId }, 'form-submission job for an unknown submission or form; dropped');
    return 'ack';
  };
}

export function startSubmissionJobs(nc: NatsConnection, deps: DecideSubmissionDeps, opts: { concurrency: number; logger: Pick<Logger, 'warn' | 'error' | 'info'> }): ConsumerHandle {
  return runConsumer(nc, {
    ...NATS_ACCESS.consumers.submissionJobs,
    concurrency: opts.concurrency,
    maxDeliver: SUBMISSION_JOBS_MAX_DELIVER,
    backoffMs: [1_000, 5_000, 30_000, 60_000, 300_000],
    ackWaitMs: 30_000,
    handler: submissionJobHandler(deps, opts.logger),
    log: (m, extra) => opts.logger.warn(extra ?? {}, m),
  });
}
