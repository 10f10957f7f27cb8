// The fan-out consumer: a durable consumer on DOMAIN (explicit ack) that turns every fact of a webhook
// event into deliveries (app/fan-out.ts). Facts that are no webhook event are acknowledged unread; a
// webhook event that does not parse is terminated (retrying cannot fix it); a store error is thrown and
// retried with runConsumer's backoff, the processed-id record making the retry safe.
import type { NatsConnection } from 'nats';
import type { Logger } from '@mailer/kit';
import { messageIdOf, runConsumer, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle } from '@mailer/nats';
import { MalformedFactError, parseFact, type DomainFact } from '@mailer/nats/facts';
import { DuplicateKeyError } from '@mailer/store';
import { fanOutBatch, type FanOutDeps } from '../app/fan-out';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../domain/webhook-events';
import { NATS_ACCESS } from '../nats-access';

export const FAN_OUT_CONSUMER = NATS_ACCESS.consumers.fanOut.durable;
const EVENTS = new Set<string>(WEBHOOK_EVENTS);

/**
 * Batch mode: the webhook events of a batch are fanned out in one transaction. A fact that does not
 * parse is terminated alone; a store error fails the whole batch (retried with the backoff).
 */
export function startFanOut(nc: NatsConnection, deps: FanOutDeps, logger: Pick<Logger, 'warn' | 'error'>): ConsumerHandle {
  const batchHandler = async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    const results: BatchHandlerResult[] = msgs.map(() => 'ack');
    const items: Array<{ fact: DomainFact & { type: WebhookEvent }; eventId: string }> = [];
    msgs.forEach((msg, i) => {
      const type = (msg.data as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !EVENTS.has(type)) return;
      try {
        items.push({ fact: parseFact(type as WebhookEvent, msg.data), eventId: messageIdOf(msg) });
      } catch (err) {
        if (!(err instanceof MalformedFactError)) throw err;
        logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating a malformed fact');
        results[i] = 'term';
      }
    });
    try {
      await fanOutBatch(deps, items);
    } catch (err) {
      // The processed records were pruned and a fact published again: its deliveries exist already.
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    return results;
  };
  return runConsumer(nc, {
    ...NATS_ACCESS.consumers.fanOut,
    concurrency: 2,
    batchSize: 200,
    maxDeliver: 50,
    log: (m, extra) => logger.warn(extra ?? {}, m),
    batchHandler,
  });
}
