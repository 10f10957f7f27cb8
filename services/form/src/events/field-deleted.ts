// Consumer of the subscriber service's `field.deleted` facts on DOMAIN: parse -> use case -> ack, or
// term for a message that is not such a fact (retrying cannot fix it). Removing a field twice
// changes nothing, so redeliveries need no processed-id record.
import { runConsumer, type ConsumedMessage, type ConsumerHandle, type HandlerResult, type Log, type NatsConnection } from '@mailer/nats';
import { forgetDeletedField } from '../app/forget-deleted-field';
import type { FormRepository } from '../store/forms';

export const FIELD_DELETED_SUBJECT = 'domain.field.deleted';
export const FIELD_DELETED_DURABLE = 'form-field-deleted';

/** The members this consumer reads; null when the message lacks them. */
export function parseFieldDeleted(data: unknown): { accountId: string; fieldId: string } | null {
  const d = data as { accountId?: unknown; field?: { id?: unknown } } | null;
  if (typeof d?.accountId !== 'string' || d.accountId === '' || typeof d.field?.id !== 'string' || d.field.id === '') return null;
  return { accountId: d.accountId, fieldId: d.field.id };
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
    stream: 'DOMAIN',
    durable: FIELD_DELETED_DURABLE,
    filterSubject: FIELD_DELETED_SUBJECT,
    handler: fieldDeletedHandler(deps),
    log: deps.log,
  });
}
