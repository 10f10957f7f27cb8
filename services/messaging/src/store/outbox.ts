// The messaging service's outbox: facts (email.*) and jobs recorded in the same transaction as the
// writes they describe, published by the relay (@mailer/nats, started by runService). Every record
// carries its own accountId; the outbox as a whole is a cross-account collection.
import { outboxRecord, outboxSchema, type OutboxDoc } from '@mailer/nats';
import type { Store, Transaction } from '@mailer/store';

export function outboxRepository(store: Store) {
  const outbox = store.collection<OutboxDoc>('outbox', outboxSchema);
  return {
    /** Records facts and jobs in the caller's transaction. */
    async record(tx: Transaction, messages: ReadonlyArray<{ subject: string; payload: unknown }>): Promise<void> {
      if (messages.length) await outbox.insertMany(messages.map((m) => outboxRecord(m.subject, m.payload)), { tx });
    },
  };
}
export type OutboxRepository = ReturnType<typeof outboxRepository>;
