// The events consumer: a durable pull consumer on EVENTS `events.>` (explicit ack) handing batches of
// events to the RecordEvents use case (one store transaction per batch), shaped parse -> use case ->
// ack | term: an event that does not parse is terminated (it never will), a recorded or already
// recorded one acknowledged. A thrown error (the store, or the subscriber service not answering) is
// retried with the backoff below; app/record-event.ts makes every retry safe.
import type { Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle, type NatsConnection } from '@mailer/nats';
import { MalformedFactError, parseCustomEvent, type CustomEvent } from '@mailer/nats/facts';
import { recordEvents, type RecordEventDeps } from '../app/record-event';
import { NATS_ACCESS } from '../../nats-access';

const BACKOFF_MS = [1_000, 5_000, 30_000, 60_000, 300_000];
/** The last delay repeats: about a day of subscriber-service or store outage before an event is given up (logged). */
const MAX_DELIVER = 300;
/**
 * Events are pulled, recorded and acknowledged in batches (one pull, one store transaction and one
 * confirmed ack per batch rather than per event): BATCHES_IN_FLIGHT batches that share the configured
 * concurrency, so that one batch waits for its lookups while another is written.
 */
const BATCHES_IN_FLIGHT = 2;

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
  /** The event, or the verdict on a message that is not one. */
  const parse = (msg: ConsumedMessage): CustomEvent | 'term' => {
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
    return event;
  };
  const handleBatch = async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    const results: BatchHandlerResult[] = new Array(msgs.length);
    const events: CustomEvent[] = [];
    const positions: number[] = [];
    msgs.forEach((msg, i) => {
      const event = parse(msg);
      if (event === 'term') results[i] = 'term';
      else (events.push(event), positions.push(i));
    });
    (await recordEvents(opts.deps, events)).forEach((result, k) => {
      if ('error' in result) {
        results[positions[k]] = result;
        return;
      }
      count(result.recorded ? result.outcome : 'duplicate');
      if (!result.recorded) logger.debug({ accountId: events[k].accountId, eventId: events[k].eventId }, 'custom event recorded already; acknowledged');
      results[positions[k]] = 'ack';
    });
    return results;
  };
  return runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.customEvents,
    concurrency: BATCHES_IN_FLIGHT,
    batchSize: Math.max(1, Math.ceil(opts.concurrency / BATCHES_IN_FLIGHT)),
    maxDeliver: MAX_DELIVER,
    backoffMs: BACKOFF_MS,
    ackWaitMs: 30_000,
    log: (msg, extra) => logger.warn(extra ?? {}, msg),
    // An event's error is that event's: retried with the backoff, the others of the batch settle. A
    // thrown one (the store failing) is the batch's.
    batchHandler: handleBatch,
  });
}
