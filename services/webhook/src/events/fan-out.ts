// The fan-out consumer: a durable consumer on DOMAIN (explicit ack) that turns every fact of a webhook
// event into deliveries (app/fan-out.ts). Facts that are no webhook event are acknowledged unread; a
// webhook event that does not parse is terminated (retrying cannot fix it); a store error is thrown and
// retried with runConsumer's backoff, the processed-id record making the retry safe.
import type { NatsConnection } from 'nats';
import type { Logger } from '@mailer/kit';
import { messageIdOf, runConsumer, type ConsumedMessage, type ConsumerHandle, type HandlerResult } from '@mailer/nats';
import { MalformedFactError, parseFact } from '@mailer/nats/facts';
import { DuplicateKeyError } from '@mailer/store';
import { fanOut, type FanOutDeps } from '../app/fan-out';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../domain/webhook-events';

export const FAN_OUT_DURABLE = 'webhook-fan-out';
export const FAN_OUT_CONSUMER = FAN_OUT_DURABLE;
const EVENTS = new Set<string>(WEBHOOK_EVENTS);

export function startFanOut(nc: NatsConnection, deps: FanOutDeps, logger: Pick<Logger, 'warn' | 'error'>): ConsumerHandle {
  const handler = async (msg: ConsumedMessage): Promise<HandlerResult> => {
    const type = (msg.data as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !EVENTS.has(type)) return 'ack';
    let fact;
    try {
      fact = parseFact(type as WebhookEvent, msg.data);
    } catch (err) {
      if (!(err instanceof MalformedFactError)) throw err;
      logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating a malformed fact');
      return 'term';
    }
    try {
      await fanOut(deps, fact, messageIdOf(msg));
    } catch (err) {
      // The processed record was pruned and the fact published again: its deliveries exist already.
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    return 'ack';
  };
  return runConsumer(nc, {
    stream: 'DOMAIN',
    durable: FAN_OUT_DURABLE,
    filterSubject: 'domain.>',
    concurrency: 8,
    maxDeliver: 50,
    log: (m, extra) => logger.warn(extra ?? {}, m),
    handler,
  });
}
