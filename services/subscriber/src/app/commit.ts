import type { Transaction } from '@mailer/store';
import type { DomainEvent } from '../events/subscriber-events';
import { atomically } from '../store/atomic';
import { eventsCommitted, type Deps } from './deps';

/**
 * Commits a change of the account's definitions (fields, tags, topics) and the facts it pushes onto
 * `events` in one transaction, then answers once they are published (eventsCommitted).
 */
export async function commitDefinitionChange<R>(deps: Deps, unit: (tx: Transaction, events: DomainEvent[]) => Promise<R>): Promise<R> {
  const result = await atomically(deps.store, async (tx) => {
    const events: DomainEvent[] = [];
    const r = await unit(tx, events);
    await deps.outbox.record(tx, events);
    return r;
  });
  await eventsCommitted(deps);
  return result;
}
