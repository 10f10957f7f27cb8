// The events consumer: a durable pull consumer on EVENTS `events.>` (explicit ack, at most
// EVENTS_CONSUMER_CONCURRENCY events in work at once) shaped parse -> use case -> ack | term:
// an event that does not parse is terminated (it never will), a recorded or already recorded one
// acknowledged. A thrown error (the store, or the subscriber service not answering) is retried with
// the backoff below; app/record-event.ts makes every retry safe.
import { semaphore, type Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle, type HandlerResult, type NatsConnection } from '@mailer/nats';
import { MalformedFactError, parseCustomEvent } from '@mailer/nats/facts';
import { recordEvent, type RecordEventDeps } from '../app/record-event';
import { NATS_ACCESS } from '../nats-access';

const BACKOFF_MS = [1_000, 5_000, 30_000, 60_000, 300_000];
/** The last delay repeats: about a day of subscriber-service or store outage before an event is given up (logged). */
const MAX_DELIVER = 300;
/**
 * Events are pulled and acknowledged in batches (one pull and one confirmed ack per batch rather
 * than per event), BATCHES_IN_FLIGHT batches of half the concurrency each; a semaphore keeps the
 * events in work at the configured concurrency across them.
 */
const BATCHES_IN_FLIGHT = 4;

export interface CustomEventsOptions {
  nc: NatsConnection;
  deps: RecordEventDeps;
  concurrency: number;
  logger: Pick<Logger, 'warn' | 'error' | 'debug'>;
  /** Counts every handled event by outcome (the event's outcome, duplicate, malformed). */
  outcomes?: { inc(labels: { outcome: string }): void };
}

export function startCustomEventsConsumer(opts: CustomEventsOptions): ConsumerHandle {
  const { logger } = opts;
  const count = (outcome: string) => opts.outcomes?.inc({ outcome: outcome.toLowerCase() });
  const limit = semaphore(opts.concurrency);
  const handle = async (msg: ConsumedMessage): Promise<HandlerResult> => {
    let event;
    try {
      event = parseCustomEvent(msg.data);
    } catch (err) {
      if (!(err instanceof MalformedFactError)) throw err;
      logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed custom event');
      count('malformed');
      return 'term';
    }
    // The subject names the account the gateway stored it for; a body claiming another is not trusted.
    if (msg.subject !== `events.${event.accountId}`) {
      logger.error({ seq: msg.seq, subject: msg.subject }, 'terminating custom event whose accountId does not match its subject');
      count('malformed');
      return 'term';
    }
    const result = await recordEvent(opts.deps, event);
    count(result.recorded ? result.outcome : 'duplicate');
    if (!result.recorded) logger.debug({ accountId: event.accountId, eventId: event.eventId }, 'custom event recorded already; acknowledged');
    return 'ack';
  };
  return runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.customEvents,
    concurrency: BATCHES_IN_FLIGHT,
    batchSize: Math.max(1, Math.ceil(opts.concurrency / 2)),
    maxDeliver: MAX_DELIVER,
    backoffMs: BACKOFF_MS,
    ackWaitMs: 30_000,
    log: (msg, extra) => logger.warn(extra ?? {}, msg),
    // A thrown error is that event's: retried with the backoff, the others of the batch settle.
    batchHandler: (msgs) => Promise.all(msgs.map((m): Promise<BatchHandlerResult> => limit(() => handle(m)).catch((error: unknown) => ({ error })))),
  });
}
