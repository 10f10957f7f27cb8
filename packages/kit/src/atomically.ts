import type { Store, Transaction } from '@mailer/store';
import { DomainError, GrpcStatus } from './errors';

/** A guarded write found the document changed since it was read (optimistic concurrency): the whole unit is retried. */
export class ConcurrentChange extends Error {
  constructor(what: string) {
    super(`${what} changed concurrently`);
    this.name = 'ConcurrentChange';
  }
}

const ATTEMPTS = 5;

/**
 * Runs read-validate-write as one unit: the reads, the checks and every write (with its outbox
 * events) inside one store transaction. On the embedded store the transaction holds the write lock,
 * so nothing can change between the reads and the commit. On MongoDB reads are not part of the
 * transaction, so writes to subscribers are guarded by `version` and a lost race (ConcurrentChange)
 * re-runs the unit from its reads; after a few lost races the caller gets ABORTED.
 */
export async function atomically<R>(store: Store, unit: (tx: Transaction) => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.transaction(unit);
    } catch (err) {
      if (!(err instanceof ConcurrentChange)) throw err;
      if (attempt >= ATTEMPTS) throw new DomainError(GrpcStatus.ABORTED, 'concurrent_modification', 'the data changed concurrently too often; retry the request');
    }
  }
}
