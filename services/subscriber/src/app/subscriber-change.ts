// The shared step of every use case that changes one subscriber (ReplaceSubscriberData, ...Email,
// ...FirstName, ...Status, ReplaceSubscriberTopics, OptOutOfTopic, SetFieldValue, DeleteFieldValue).
import { diffSubscriber, type AccountDefinitions } from '../domain/contacts';
import type { SubscriberState } from '../domain/types';
import { changeEvents } from '../events/subscriber-events';
import { atomically } from '../store/atomic';
import { ensureDefaultTopic } from './default-topic';
import { loadDefinitions } from './definitions';
import { eventsCommitted, nowOf, type Deps } from './deps';
import { subscriberNotFound } from './not-found';

/** A subscriber of the account, or subscriber_not_found. */
export async function existingSubscriber(deps: Deps, accountId: string, id: string): Promise<SubscriberState> {
  const s = await deps.subscribers.get(accountId, id);
  if (!s) throw subscriberNotFound(id);
  return s;
}

/** A subscriber after a use case, with the account definitions it was validated against. */
export interface SubscriberWithDefinitions {
  state: SubscriberState;
  defs: AccountDefinitions;
}

/**
 * One change of one subscriber, atomically: read it and the account, let `change` validate and
 * compute the complete new state (it throws before anything is written), then one guarded write
 * with its events. Nothing changed -> no write, no event.
 */
export async function changeSubscriber(
  deps: Deps,
  accountId: string,
  id: string,
  change: (current: SubscriberState, defs: AccountDefinitions, now: string) => SubscriberState,
): Promise<SubscriberWithDefinitions> {
  await ensureDefaultTopic(deps, accountId);
  const now = nowOf(deps);
  const out = await atomically(deps.store, async (tx) => {
    const [current, defs] = await Promise.all([deps.subscribers.get(accountId, id), loadDefinitions(deps, accountId)]);
    if (!current) throw subscriberNotFound(id);
    const next = change(current, defs, now);
    const diff = diffSubscriber(current, next);
    if (!diff.changed) return { state: current, defs, wrote: false };
    const after = { ...next, version: current.version + 1 };
    await deps.subscribers.write(tx, accountId, { updates: [{ before: current, after }], events: changeEvents(accountId, current, after, diff, defs, now) }, now);
    return { state: after, defs, wrote: true };
  });
  if (out.wrote) await eventsCommitted(deps);
  return { state: out.state, defs: out.defs };
}
