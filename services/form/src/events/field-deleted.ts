// Consumer of the subscriber service's `field.deleted` facts on DOMAIN: parse -> use case -> ack, or
// term for a message that is not such a fact (retrying cannot fix it). Removing a field twice
// changes nothing, so redeliveries need no processed-id record.
import { runConsumer, type ConsumedMessage, type ConsumerHandle, type HandlerResult, type Log, type NatsConnection } from '@mailer/nats';
import { MalformedFactError, parseFact } from '@mailer/nats/facts';
import { forgetDeletedField } from '../app/forget-deleted-field';
import type { FormRepository } from '../store/forms';
import { NATS_ACCESS } from '../nats-access';

/** The members this consumer reads, from the shared fact definition; null when the message is not such a fact. */
export function parseFieldDeleted(data: unknown): { accountId: string; fieldId: string } | null {
  try {
    const fact = parseFact('field.deleted', data);
    return { accountId: fact.accountId, fieldId: fact.field.id };
  } catch (err) {
    if (err instanceof MalformedFactError) return null;
    throw err;
  }
}

export function fieldDeletedHandler(deps: { forms: FormRepository; log?: Log }) {
  return async (msg: ConsumedMessage): Promise<HandlerResult> => {
    const fact = parseFieldDeleted(msg.data);
    if (!fact) {
      deps.log?.('terminating a malformed field.deleted fact', { seq: msg.seq });
      return 'term';
    }
    await forgetDeletedField(deps, fact); // a store error throws: nak with backoff (runConsumer)
    return 'ack';
  };
}

export function startFieldDeletedConsumer(nc: NatsConnection, deps: { forms: FormRepository; log?: Log }): ConsumerHandle {
  return runConsumer(nc, {
    ...NATS_ACCESS.consumers.fieldDeleted,
    handler: fieldDeletedHandler(deps),
    log: deps.log,
  });
}
