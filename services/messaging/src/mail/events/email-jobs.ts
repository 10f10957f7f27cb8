// The delivery worker: a durable pull consumer on JOBS `jobs.email.>` (explicit ack) handing batches
// of jobs to the DeliverMessages use case (claim a batch in one transaction, send concurrently, at most
// MAIL_SEND_CONCURRENCY sends in flight across batches, settle the batch in one transaction), shaped
// parse -> use case -> ack | nak | term: a job that does not parse is terminated, an unknown message
// acknowledged with a warning, a retry (deferred message, account over its rate, message being sent
// by another delivery) nak'ed with its delay. A thrown error (the store failing) is retried with
// runConsumer's backoff; the message record makes every retry safe (app/deliver-message.ts).
import type { NatsConnection } from 'nats';
import { semaphore, type Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import { deliverMessages, type DeliveryDeps, type DeliveryJob } from '../app/deliver-message';
import { NATS_ACCESS } from '../../nats-access';

export const EMAIL_JOBS_DURABLE = NATS_ACCESS.consumers.emailJobs.durable;
/**
 * Deliveries of one job before JetStream gives it up. Retries of a deferred message (7 tries in
 * all) and waits for the account's rate each take one, so this is far above what a message needs;
 * it only stops a job whose handler keeps throwing (about 16 h at the 5 min backoff).
 */
export const EMAIL_JOBS_MAX_DELIVER = 200;

export interface EmailJobsOptions {
  nc: NatsConnection;
  deps: DeliveryDeps;
  concurrency: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** Counts every handled job by outcome (delivered, sent, deferred, bounced, failed, ...). */
  outcomes?: { inc(labels: { outcome: string }): void };
}

/**
 * Jobs are pulled and acknowledged in batches (one pull and one confirmed ack per batch), and each
 * batch is claimed and settled in one store transaction each: BATCHES_IN_FLIGHT batches of half the
 * concurrency, so that one batch is being claimed or settled while others send. The semaphore keeps
 * the sends in flight at MAIL_SEND_CONCURRENCY across them.
 */
const BATCHES_IN_FLIGHT = 4;

export function startEmailJobs(opts: EmailJobsOptions): ConsumerHandle {
  const { logger } = opts;
  const count = (outcome: string) => opts.outcomes?.inc({ outcome: outcome.toLowerCase() });
  const limit = semaphore(opts.concurrency);
  const transport = opts.deps.transport;
  const deps: DeliveryDeps = { ...opts.deps, transport: { send: (mail) => limit(() => transport.send(mail)) } };
  const handleBatch = async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    const results: BatchHandlerResult[] = new Array(msgs.length);
    const jobs: DeliveryJob[] = [];
    const positions: number[] = [];
    msgs.forEach((msg, i) => {
      try {
        jobs.push({ ...parseJob('email', msg.data), jobId: `seq:${msg.seq}`, deliveryCount: msg.deliveryCount });
        positions.push(i);
      } catch (err) {
        if (!(err instanceof MalformedFactError)) throw err;
        logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed email job');
        count('malformed');
        results[i] = 'term';
      }
    });
    (await deliverMessages(deps, jobs)).forEach((result, k) => {
      const job = jobs[k];
      if ('error' in result) {
        results[positions[k]] = result;
        return;
      }
      count(result.outcome);
      if (result.outcome === 'UNKNOWN_MESSAGE') logger.warn({ accountId: job.accountId, messageId: job.messageId }, 'email job for an unknown message; dropped');
      results[positions[k]] = 'retryInMs' in result ? { nakDelayMs: result.retryInMs } : 'ack';
    });
    return results;
  };
  return runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.emailJobs,
    concurrency: BATCHES_IN_FLIGHT,
    batchSize: Math.max(1, Math.ceil(opts.concurrency / 2)),
    maxDeliver: EMAIL_JOBS_MAX_DELIVER,
    backoffMs: [1_000, 5_000, 30_000, 60_000, 300_000],
    ackWaitMs: 30_000,
    log: (msg, extra) => logger.warn(extra ?? {}, msg),
    // A thrown error (the store failing) is the batch's: every job of it is retried with the backoff.
    batchHandler: handleBatch,
  });
}
