// Use cases of bulk tagging: AddTagsToSubscribers and RemoveTagsFromSubscribers.
import { diffSubscriber } from '../domain/contacts';
import { planTagAdd, planTagRemove, type TagChange } from '../domain/tags';
import type { SubscriberState } from '../domain/types';
import { changeEvents } from '../events/subscriber-events';
import { atomically } from '../store/atomic';
import { loadCatalog } from './definitions';
import { tagNotFound } from './not-found';
import { awaitEventBacklog, eventsCommitted, nowOf, type Deps } from './deps';

/** Subscriber and tag ids as parsed from the request (domain/ids parseIdList). */
export interface BulkTaggingInput {
  accountId: string;
  subscriberIds: string[];
  tagIds: string[];
}

/** One read of the selected subscribers, one write of the changed ones with their events. */
async function bulkTag<R>(
  deps: Deps,
  input: BulkTaggingInput,
  plan: (ids: string[], found: SubscriberState[], tagIds: string[]) => { changes: TagChange[]; result: R },
): Promise<R> {
  const { accountId, subscriberIds: ids, tagIds } = input;
  await awaitEventBacklog(deps);
  const now = nowOf(deps);
  const out = await atomically(deps.store, async (tx) => {
    const [tags, catalog, found] = await Promise.all([deps.catalog.findTags(accountId, tagIds), loadCatalog(deps, accountId), deps.subscribers.findByIds(accountId, ids)]);
    const known = new Map(tags.map((t) => [t.id, t.id]));
    for (const t of tagIds) if (!known.has(t)) throw tagNotFound(t);
    const { changes, result } = plan(ids, found, tagIds.map((t) => known.get(t)!));
    const byId = new Map(found.map((s) => [s.id, s]));
    const updates = changes.map((c) => {
      const before = byId.get(c.id)!;
      return { before, after: { ...before, tags: c.tags, version: before.version + 1 } };
    });
    const events = updates.flatMap(({ before, after }) => changeEvents(accountId, before, after, diffSubscriber(before, after), { catalog }, now));
    await deps.subscribers.write(tx, accountId, { updates, events }, now);
    return { result, wrote: updates.length > 0 };
  });
  if (out.wrote) await eventsCommitted(deps);
  return out.result;
}

export const addTagsToSubscribers = (deps: Deps, input: BulkTaggingInput) => bulkTag(deps, input, planTagAdd);
export const removeTagsFromSubscribers = (deps: Deps, input: BulkTaggingInput) => bulkTag(deps, input, planTagRemove);
