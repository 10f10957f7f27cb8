// The account's default topic (the API contract): every account has exactly one at all times, from its
// first use on. Created lazily, by the first request of an account that touches topics or subscribers.
import { createHash } from 'node:crypto';
import { DuplicateKeyError, type Store } from '@mailer/store';
import { DEFAULT_TOPIC_LABEL } from '../domain/topics';
import type { TopicDef } from '../domain/types';
import { topicEvent } from '../events/catalog-events';
import { atomically } from '../store/atomic';
import { eventsCommitted, nowOf, type Deps } from './deps';

/**
 * The id of an account's first default topic, derived from the account id: two concurrent first uses
 * insert the same id, so the store's unique `_id` lets only one of them create it. It has the shape of
 * a v4 UUID (version and variant bits set) like every other id.
 */
export function defaultTopicId(accountId: string): string {
  const b = createHash('sha256').update(`default-topic:${accountId}`).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Accounts known to have their default topic, per store (a new store, as in a test that deletes and
 * recreates it, starts with none known). Once an account has one it keeps one (the flag only moves,
 * and the default cannot be deleted), so the check costs a store read only on an account's first
 * request in this process.
 */
const known = new WeakMap<Store, Set<string>>();
const knownOf = (store: Store): Set<string> => {
  let set = known.get(store);
  if (!set) known.set(store, (set = new Set()));
  return set;
};

/**
 * Makes sure the account has its default topic. Call it before a request's transaction (never inside
 * one: creating the topic is a transaction of its own).
 */
export async function ensureDefaultTopic(deps: Deps, accountId: string): Promise<void> {
  const set = knownOf(deps.store);
  if (set.has(accountId)) return;
  if (!hasDefault(await deps.catalog.listTopics(accountId))) await createDefaultTopic(deps, accountId);
  set.add(accountId);
}

/**
 * For a path that read the account's topics anyway: when the default is missing although this process
 * believed it present (the store was emptied underneath it), forget the account so that its next
 * request creates the default again. Returns whether the default is there.
 */
export function checkDefaultPresent(deps: Deps, accountId: string, topics: Iterable<TopicDef>): boolean {
  if (hasDefault(topics)) return true;
  knownOf(deps.store).delete(accountId);
  return false;
}

function hasDefault(topics: Iterable<TopicDef>): boolean {
  for (const t of topics) if (t.isDefault) return true;
  return false;
}

async function createDefaultTopic(deps: Deps, accountId: string): Promise<void> {
  const now = nowOf(deps);
  const topic: TopicDef = { id: defaultTopicId(accountId), label: DEFAULT_TOPIC_LABEL, description: null, active: true, isDefault: true, createdAt: now };
  try {
    const created = await atomically(deps.store, async (tx) => {
      // re-read: the account may have got its default between the check and this transaction
      if (hasDefault(await deps.catalog.listTopics(accountId))) return false;
      await deps.catalog.insertTopic(tx, accountId, topic);
      // the same fact as POST /topics emits, so every reader of topic.created sees this topic too
      await deps.outbox.record(tx, [topicEvent('created', accountId, topic, now, { enrolledExistingSubscribers: false, enrolledCount: 0 })]);
      return true;
    });
    if (created) await eventsCommitted(deps);
  } catch (err) {
    // a concurrent first use inserted the same id: the account has its default now
    if (!(err instanceof DuplicateKeyError)) throw err;
  }
}
