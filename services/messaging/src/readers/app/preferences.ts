// The reader's preference page and one-click unsubscribe (the API contract "Public web surface", RFC 8058) on
// /u/{token}. The token names the account, the reader (subscriberId) and the mail's topic when it had
// one. Subscriptions live in the subscriber service: every change is a personal opt-out there with
// source `unsubscribe_link` (or a re-join the reader asked for on the page).
import { DomainError } from '@mailer/kit';
import type { AccountTopic, SubscriberTopics } from '../../clients/subscribers';
import type { PublicLinks } from './public-links';

export const OPT_OUT_SOURCE = 'unsubscribe_link';

export interface PreferenceDeps {
  links: PublicLinks;
  subscribers: SubscriberTopics;
}

/** One line of the page: an active topic and whether the reader is in it. */
export interface TopicChoice {
  topicId: string;
  label: string;
  description: string | null;
  subscribed: boolean;
}

export type PreferenceChange = { action: 'save'; topicIds: string[] } | { action: 'unsubscribe_all' };

interface Reader {
  accountId: string;
  subscriberId: string | null;
  topicId: string | null;
}

/** The reader a token names, or null when it does not verify. */
function readerOf(deps: PreferenceDeps, token: string): Reader | null {
  const claims = deps.links.verify('unsubscribe', token);
  return claims ? { accountId: claims.accountId, subscriberId: claims.subscriberId ?? null, topicId: claims.topicId ?? null } : null;
}

/** A reader the subscriber service no longer knows (deleted): the page is "not found". */
const isGone = (err: unknown) => err instanceof DomainError && err.errorId === 'subscriber_not_found';

/** The account's active topics with the reader's subscriptions (creation order); null: not found. */
export async function preferencesOf(deps: PreferenceDeps, token: string): Promise<TopicChoice[] | null> {
  const reader = readerOf(deps, token);
  if (!reader) return null;
  // A mail to an address that is no subscriber has nothing to choose from.
  if (!reader.subscriberId) return [];
  try {
    return await choices(deps, reader.accountId, reader.subscriberId);
  } catch (err) {
    if (isGone(err)) return null;
    throw err;
  }
}

async function choices(deps: PreferenceDeps, accountId: string, subscriberId: string): Promise<TopicChoice[]> {
  const [topics, mine] = await Promise.all([deps.subscribers.accountTopics(accountId), deps.subscribers.readerTopics(accountId, subscriberId)]);
  const subscribed = new Set(mine.filter((t) => t.subscribed).map((t) => t.topicId));
  return topics.filter((t) => t.active).map((t: AccountTopic) => ({ topicId: t.topicId, label: t.label, description: t.description, subscribed: subscribed.has(t.topicId) }));
}

/**
 * RFC 8058 one-click: out of the mail's topic, or of every topic when the mail had none. False when
 * the token does not verify; done (true) when there is nothing left to leave.
 */
export async function oneClickUnsubscribe(deps: PreferenceDeps, token: string): Promise<boolean> {
  const reader = readerOf(deps, token);
  if (!reader) return false;
  if (!reader.subscriberId) return true;
  try {
    if (reader.topicId) await deps.subscribers.optOut(reader.accountId, reader.subscriberId, reader.topicId, OPT_OUT_SOURCE);
    else await leaveAll(deps, reader.accountId, reader.subscriberId);
  } catch (err) {
    // A deleted reader or topic gets no more of that mail either: the request is satisfied.
    if (isGone(err) || (err instanceof DomainError && err.errorId === 'topic_not_found')) return true;
    throw err;
  }
  return true;
}

/** Personal opt-outs of every topic the reader has not opted out of yet, so no later import re-adds them. */
async function leaveAll(deps: PreferenceDeps, accountId: string, subscriberId: string): Promise<void> {
  const mine = await deps.subscribers.readerTopics(accountId, subscriberId);
  for (const t of mine) if (!t.optedOut) await deps.subscribers.optOut(accountId, subscriberId, t.topicId, OPT_OUT_SOURCE);
}

/**
 * The page's form: `save` keeps exactly the checked active topics (unchecked subscriptions become
 * opt-outs; checked topics the reader was not in are re-joined, lifting an earlier opt-out), or
 * `unsubscribe_all`. Returns the page's new state; null when the token or reader is not found.
 * Ids that are not active topics of the account (an edited form) are ignored.
 */
export async function changePreferences(deps: PreferenceDeps, token: string, change: PreferenceChange): Promise<TopicChoice[] | null> {
  const reader = readerOf(deps, token);
  if (!reader) return null;
  if (!reader.subscriberId) return [];
  const { accountId, subscriberId } = reader;
  try {
    if (change.action === 'unsubscribe_all') {
      await leaveAll(deps, accountId, subscriberId);
    } else {
      const before = await choices(deps, accountId, subscriberId);
      const wanted = new Set(change.topicIds);
      for (const t of before) if (t.subscribed && !wanted.has(t.topicId)) await deps.subscribers.optOut(accountId, subscriberId, t.topicId, OPT_OUT_SOURCE);
      const rejoin = before.filter((t) => !t.subscribed && wanted.has(t.topicId)).map((t) => t.topicId);
      if (rejoin.length) {
        // ReplaceSubscriberTopics takes active topics only: the reader's active subscriptions as they
        // are now, plus the re-joined ones (a subscription to a deactivated topic, which is no longer
        // mailed, does not survive a re-join from this page).
        const now = await choices(deps, accountId, subscriberId);
        await deps.subscribers.replace(accountId, subscriberId, [...now.filter((t) => t.subscribed).map((t) => t.topicId), ...rejoin]);
      }
    }
    return await choices(deps, accountId, subscriberId);
  } catch (err) {
    if (isGone(err)) return null;
    throw err;
  }
}
