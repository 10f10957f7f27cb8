// The messaging service's outbox: jobs and facts recorded in the same store transaction as the write
// they belong to, published by the relay (@mailer/nats, started by runService) to JOBS / DOMAIN. The
// outbox is the one cross-account collection of this service (every record names its own account).
import { outboxRecord, outboxSchema, OUTBOX_COLLECTION, type OutboxDoc } from '@mailer/nats';
import type { Store, Transaction } from '@mailer/store';

export interface OutboxEntry {
  subject: string;
  payload: unknown;
  /**
   * The record's id, which is also the JetStream msgID: a stable id (`email-job-<messageId>`) makes a
   * re-publish after a crash a duplicate JetStream drops. Absent: a random id.
   */
  id?: string;
}

/** Records jobs or facts in the caller's transaction. */
export async function recordJobs(store: Store, tx: Transaction, entries: ReadonlyArray<OutboxEntry>): Promise<void> {
  if (!entries.length) return;
  const outbox = store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema);
  await outbox.insertMany(entries.map((e) => outboxRecord(e.subject, e.payload, e.id)), { tx });
}
