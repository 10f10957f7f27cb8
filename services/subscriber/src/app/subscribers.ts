// Use cases of subscribers: AddSubscriber, GetSubscriber, GetSubscriberByEmail, FindSubscribersByEmail,
// DeleteSubscriber, ListSubscribers, SyncSubscribers. Inputs are parsed by handlers/subscribers.ts.
import { DomainError, GrpcStatus, notFound } from '@mailer/kit';
import { newSubscriber } from '../domain/contacts';
import type { Catalog } from '../domain/fields';
import type { SubscriberStatus } from '../domain/subscriber';
import { planSync, syncEmails, type SyncMode, type SyncRow, type SyncRowResult } from '../domain/sync';
import type { SubscriberInput, SubscriberState } from '../domain/types';
import { changeEvents, createdEvent, deletedEvent, type DomainEvent } from '../events/subscriber-events';
import { atomically, ConcurrentChange } from '../store/atomic';
import { ensureDefaultTopic } from './default-topic';
import { loadCatalog, loadDefinitions } from './definitions';
import { awaitEventBacklog, eventsCommitted, newIdOf, nowOf, type Deps } from './deps';
import { subscriberNotFound, tagNotFound, topicNotFound } from './not-found';
import { existingSubscriber, type SubscriberWithDefinitions } from './subscriber-change';

export async function addSubscriber(deps: Deps, input: { accountId: string; subscriber: SubscriberInput }): Promise<SubscriberWithDefinitions> {
  const { accountId } = input;
  await ensureDefaultTopic(deps, accountId); // subscribers added without topicIds join it
  const now = nowOf(deps);
  const out = await atomically(deps.store, async (tx) => {
    const defs = await loadDefinitions(deps, accountId);
    const state = newSubscriber(input.subscriber, defs, newIdOf(deps), now);
    await deps.subscribers.write(tx, accountId, { inserts: [state], events: [createdEvent(accountId, state, defs, now)] }, now);
    return { state, defs };
  });
  await eventsCommitted(deps);
  return out;
}

export async function getSubscriber(deps: Deps, input: { accountId: string; subscriberId: string }): Promise<{ state: SubscriberState; catalog: Catalog }> {
  const [state, catalog] = await Promise.all([existingSubscriber(deps, input.accountId, input.subscriberId), loadCatalog(deps, input.accountId)]);
  return { state, catalog };
}

/** `email` canonical (domain/email canonicalEmail). */
export async function getSubscriberByEmail(deps: Deps, input: { accountId: string; email: string }): Promise<{ state: SubscriberState; catalog: Catalog }> {
  const state = await deps.subscribers.getByEmail(input.accountId, input.email);
  if (!state) throw notFound('subscriber_not_found', `no subscriber has the email ${input.email}`);
  return { state, catalog: await loadCatalog(deps, input.accountId) };
}

/** Each address's subscriber in the account, or null, in the order asked: one store query. `emails` canonical. */
export async function findSubscribersByEmail(deps: Deps, input: { accountId: string; emails: string[] }): Promise<Array<SubscriberState | null>> {
  const found = await deps.subscribers.findByEmails(input.accountId, [...new Set(input.emails)]);
  return input.emails.map((email) => found.get(email) ?? null);
}

export async function deleteSubscriber(deps: Deps, input: { accountId: string; subscriberId: string }): Promise<void> {
  const { accountId, subscriberId: id } = input;
  const now = nowOf(deps);
  await atomically(deps.store, async (tx) => {
    const [s, catalog] = await Promise.all([deps.subscribers.get(accountId, id), loadCatalog(deps, accountId)]);
    if (!s) throw subscriberNotFound(id);
    await deps.subscribers.write(tx, accountId, { deletes: [s], events: [deletedEvent(accountId, s, { catalog }, now)] }, now);
  });
  await eventsCommitted(deps);
}

export interface ListSubscribersInput {
  accountId: string;
  page: { pageNumber: number; pageSize: number; skip: number };
  status?: SubscriberStatus;
  tagId?: string;
  topicId?: string;
  /** Anchored search pattern (domain/subscriber prefixPattern); absent or '^': no search. */
  prefix?: string;
  /** The search as given: passed, trimmed, to the segment service. */
  search?: string;
  segmentId?: string;
}

export interface SubscriberPage {
  items: SubscriberState[];
  total: number;
  counts: Record<SubscriberStatus, number>;
}

export async function listSubscribers(deps: Deps, input: ListSubscribersInput): Promise<SubscriberPage> {
  const { accountId, tagId, topicId, prefix, status, page } = input;
  if (tagId && !(await deps.catalog.getTag(accountId, tagId))) throw tagNotFound(tagId);
  if (topicId && !(await deps.catalog.getTopic(accountId, topicId))) throw topicNotFound(topicId);
  return input.segmentId
    ? segmentPage(deps, accountId, input.segmentId, { status, tagId, topicId, search: prefix && prefix !== '^' ? input.search!.trim() : undefined }, page)
    : deps.subscribers.list(accountId, { status, tagId, topicId, prefix: prefix === '^' ? undefined : prefix }, page.skip, page.pageSize);
}

/**
 * ListSubscribers with a segment: the segment service (owner of the contact projection and the
 * expression compiler) answers the page of member ids with the same filters, order, total and
 * status counts; the overviews come from this service's store, in that order. A subscriber deleted
 * between the two reads is left out of the page (the total is the segment service's).
 */
async function segmentPage(
  deps: Deps,
  accountId: string,
  segmentId: string,
  q: { status?: SubscriberStatus; tagId?: string; topicId?: string; search?: string },
  page: { pageNumber: number; pageSize: number },
): Promise<SubscriberPage> {
  if (!deps.segmentMembers) throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', 'the segment service is not configured');
  const res = await deps.segmentMembers.list({ accountId, segmentId, pageNumber: page.pageNumber, pageSize: page.pageSize, status: q.status, tagId: q.tagId, topicId: q.topicId, search: q.search });
  const found = new Map((await deps.subscribers.findByIds(accountId, res.subscriberIds)).map((s) => [s.id, s] as const));
  const c = res.statusCounts;
  const n = (v: string | undefined) => Number(v ?? 0) || 0;
  return {
    items: res.subscriberIds.flatMap((id) => (found.has(id) ? [found.get(id)!] : [])),
    total: n(res.total),
    counts: { UNCONFIRMED: n(c?.unconfirmed), ACTIVE: n(c?.active), UNSUBSCRIBED: n(c?.unsubscribed), BOUNCED: n(c?.bounced), COMPLAINED: n(c?.complained), BLOCKED: n(c?.blocked) },
  };
}

/** Rows as parsed from the request (an unreadable row is kept, to be reported FAILED at its index). */
export async function syncSubscribers(deps: Deps, input: { accountId: string; mode: SyncMode; rows: SyncRow[] }): Promise<SyncRowResult[]> {
  const { accountId, mode, rows } = input;
  await awaitEventBacklog(deps);
  await ensureDefaultTopic(deps, accountId);
  const now = nowOf(deps);
  const plan = await atomically(deps.store, async (tx) => {
    const [defs, existingByEmail] = await Promise.all([loadDefinitions(deps, accountId), deps.subscribers.findByEmails(accountId, syncEmails(rows))]);
    const plan = planSync(rows, mode, defs, existingByEmail, () => newIdOf(deps), now);
    const events: DomainEvent[] = [
      ...plan.creates.map((s) => createdEvent(accountId, s, defs, now)),
      ...plan.updates.flatMap((u) => changeEvents(accountId, u.before, u.after, u.diff, defs, now)),
    ];
    try {
      await deps.subscribers.write(tx, accountId, { inserts: plan.creates, updates: plan.updates, events }, now);
    } catch (err) {
      // an email created concurrently by another request (MongoDB): plan the request again
      if (err instanceof DomainError && err.errorId === 'subscriber_email_exists') throw new ConcurrentChange('subscriber email');
      throw err;
    }
    return plan;
  });
  if (plan.creates.length || plan.updates.length) await eventsCommitted(deps);
  return plan.results;
}
