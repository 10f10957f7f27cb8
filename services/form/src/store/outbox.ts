// The service's outbox: facts recorded in the same transaction as the writes they describe, published
// to the DOMAIN stream by the relay (@mailer/nats). Every fact carries its own accountId; the outbox as
// a whole is the one cross-account collection of this service.
import { outboxRecord, outboxSchema, type OutboxDoc } from '@mailer/nats';
import type { Store, Transaction } from '@mailer/store';

export function outboxRepository(store: Store) {
  const outbox = store.collection<OutboxDoc>('outbox', outboxSchema);
  return {
    /**
     * Records facts in the caller's transaction. A fact with an `id` keeps it as its outbox id, which
     * is the published message's msgID (a fact derived from a unique record: one id, one message).
     */
    async record(tx: Transaction, facts: ReadonlyArray<{ subject: string; payload: unknown; id?: string }>): Promise<void> {
      if (facts.length) await outbox.insertMany(facts.map((f) => outboxRecord(f.subject, f.payload, f.id)), { tx });
    },
  };
}
export type OutboxRepository = ReturnType<typeof outboxRepository>;
