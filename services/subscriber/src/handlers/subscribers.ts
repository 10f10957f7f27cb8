// SubscriberService: subscribers, their replaceable data, topics, field values, bulk tagging, sync.
import { accountOf, DomainError, GrpcStatus, notFound, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import type { Transaction } from '@mailer/store';
import { diffSubscriber, newSubscriber, replaceData, type AccountDefinitions } from '../domain/contacts';
import { canonicalEmail } from '../domain/email';
import { parseId, parseIdList } from '../domain/ids';
import { LIMITS } from '../domain/limits';
import { manualStatus, normalizeFirstName, pageWindow, prefixPattern } from '../domain/subscriber';
import { assertSyncSize, planSync, syncEmails, type SyncRow } from '../domain/sync';
import { planTagAdd, planTagRemove, type TagChange } from '../domain/tags';
import { optOutOfTopic, replaceTopics, subscriberTopicsView, validateOptOutSource, validateTopicRefs } from '../domain/topics';
import type { SubscriberState } from '../domain/types';
import type { SubscriberStatus } from '../domain/subscriber';
import { parseValueFieldId, validateValue } from '../domain/values';
import { changeEvents, createdEvent, deletedEvent, type DomainEvent } from '../events/subscriber-events';
import { atomically, ConcurrentChange } from '../store/atomic';
import { ensureDefaultTopic } from '../app/default-topic';
import { loadCatalog, loadDefinitions } from '../app/definitions';
import { awaitEventBacklog, eventsCommitted, newIdOf, nowOf, type Deps } from '../app/deps';
import {
  fieldEntriesToProto,
  fieldInputsFromProto,
  overviewToProto,
  statusFromProto,
  subscriberDataToProto,
  subscriberInputFromProto,
  subscriberToProto,
  syncModeFromProto,
  syncOutcomeToProto,
  topicViewToProto,
  valueFromProto,
  valueToProto,
} from './mapping';

type SubscriberHandlerNames =
  | 'addSubscriber'
  | 'getSubscriber'
  | 'getSubscriberByEmail'
  | 'deleteSubscriber'
  | 'listSubscribers'
  | 'syncSubscribers'
  | 'getSubscriberData'
  | 'replaceSubscriberData'
  | 'replaceSubscriberEmail'
  | 'replaceSubscriberFirstName'
  | 'replaceSubscriberStatus'
  | 'getSubscriberTopics'
  | 'replaceSubscriberTopics'
  | 'optOutOfTopic'
  | 'listFieldValues'
  | 'setFieldValue'
  | 'deleteFieldValue'
  | 'addTagsToSubscribers'
  | 'removeTagsFromSubscribers';

const subscriberNotFound = (id: string) => notFound('subscriber_not_found', `subscriber ${id} does not exist`);

export function subscriberHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, SubscriberHandlerNames> {
  const { store, subscribers } = deps;

  async function existing(accountId: string, rawId: string): Promise<SubscriberState> {
    const id = parseId(rawId, 'subscriberId');
    const s = await subscribers.get(accountId, id);
    if (!s) throw subscriberNotFound(id);
    return s;
  }

  /**
   * One change of one subscriber, atomically: read it and the account, let `change` validate and
   * compute the complete new state (it throws before anything is written), then one guarded write
   * with its events. Nothing changed -> no write, no event.
   */
  async function modify(
    accountId: string,
    rawId: string,
    change: (current: SubscriberState, ctx: AccountDefinitions, now: string) => SubscriberState,
  ): Promise<{ state: SubscriberState; ctx: AccountDefinitions }> {
    const id = parseId(rawId, 'subscriberId');
    await ensureDefaultTopic(deps, accountId);
    const now = nowOf(deps);
    const out = await atomically(store, async (tx) => {
      const [current, ctx] = await Promise.all([subscribers.get(accountId, id), loadDefinitions(deps, accountId)]);
      if (!current) throw subscriberNotFound(id);
      const next = change(current, ctx, now);
      const diff = diffSubscriber(current, next);
      if (!diff.changed) return { state: current, ctx, wrote: false };
      const after = { ...next, version: current.version + 1 };
      await subscribers.write(tx, accountId, { updates: [{ before: current, after }], events: changeEvents(accountId, current, after, diff, ctx, now) }, now);
      return { state: after, ctx, wrote: true };
    });
    if (out.wrote) await eventsCommitted(deps);
    return out;
  }

  /**
   * ListSubscribers with a segment: the segment service (owner of the contact projection and the
   * expression compiler) answers the page of member ids with the same filters, order, total and
   * status counts; the overviews come from this service's store, in that order. A subscriber deleted
   * between the two reads is left out of the page (the total is the segment service's).
   */
  async function segmentPage(
    accountId: string,
    segmentId: string,
    q: { status?: SubscriberStatus; tagId?: string; topicId?: string; search?: string },
    page: { pageNumber: number; pageSize: number },
  ): Promise<{ items: SubscriberState[]; total: number; counts: Record<SubscriberStatus, number> }> {
    if (!deps.segmentMembers) throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', 'the segment service is not configured');
    const res = await deps.segmentMembers.list({ accountId, segmentId, pageNumber: page.pageNumber, pageSize: page.pageSize, status: q.status, tagId: q.tagId, topicId: q.topicId, search: q.search });
    const found = new Map((await subscribers.findByIds(accountId, res.subscriberIds)).map((s) => [s.id, s] as const));
    const c = res.statusCounts;
    const n = (v: string | undefined) => Number(v ?? 0) || 0;
    return {
      items: res.subscriberIds.flatMap((id) => (found.has(id) ? [found.get(id)!] : [])),
      total: n(res.total),
      counts: { UNCONFIRMED: n(c?.unconfirmed), ACTIVE: n(c?.active), UNSUBSCRIBED: n(c?.unsubscribed), BOUNCED: n(c?.bounced), COMPLAINED: n(c?.complained), BLOCKED: n(c?.blocked) },
    };
  }

  const dataResponse = ({ state, ctx }: { state: SubscriberState; ctx: AccountDefinitions }) => ({ data: subscriberDataToProto(state, ctx.catalog) });
  const topicsResponse = ({ state, ctx }: { state: SubscriberState; ctx: AccountDefinitions }) => ({
    topics: subscriberTopicsView([...ctx.topics.values()], state).map(topicViewToProto),
  });

  /** Bulk tagging: one read of the selected subscribers, one write of the changed ones with their events. */
  async function bulkTag<R>(
    req: { accountId: string; subscriberIds: string[]; tagIds: string[] },
    plan: (ids: string[], found: SubscriberState[], tagIds: string[]) => { changes: TagChange[]; result: R },
  ): Promise<R> {
    const accountId = accountOf(req);
    const ids = parseIdList(req.subscriberIds, 'subscriberIds', LIMITS.subscribersPerBulkRequest, { min: 1 });
    const tagIds = parseIdList(req.tagIds, 'tagIds', LIMITS.tagsPerRequest, { min: 1 });
    await awaitEventBacklog(deps);
    const now = nowOf(deps);
    const out = await atomically(store, async (tx) => {
      const [tags, catalog, found] = await Promise.all([deps.catalog.findTags(accountId, tagIds), loadCatalog(deps, accountId), subscribers.findByIds(accountId, ids)]);
      const known = new Map(tags.map((t) => [t.id, t.id]));
      for (const t of tagIds) if (!known.has(t)) throw notFound('tag_not_found', `tag ${t} does not exist`);
      const { changes, result } = plan(ids, found, tagIds.map((t) => known.get(t)!));
      const byId = new Map(found.map((s) => [s.id, s]));
      const updates = changes.map((c) => {
        const before = byId.get(c.id)!;
        return { before, after: { ...before, tags: c.tags, version: before.version + 1 } };
      });
      const events = updates.flatMap(({ before, after }) => changeEvents(accountId, before, after, diffSubscriber(before, after), { catalog }, now));
      await subscribers.write(tx, accountId, { updates, events }, now);
      return { result, wrote: updates.length > 0 };
    });
    if (out.wrote) await eventsCommitted(deps);
    return out.result;
  }

  const skipped = (r: { skippedByStatus: Record<string, number> }) => ({ ...r.skippedByStatus });

  return {
    async addSubscriber(req) {
      const accountId = accountOf(req);
      const input = subscriberInputFromProto(req);
      await ensureDefaultTopic(deps, accountId); // subscribers added without topicIds join it
      const now = nowOf(deps);
      const { state, ctx } = await atomically(store, async (tx) => {
        const ctx = await loadDefinitions(deps, accountId);
        const state = newSubscriber(input, ctx, newIdOf(deps), now);
        await subscribers.write(tx, accountId, { inserts: [state], events: [createdEvent(accountId, state, ctx, now)] }, now);
        return { state, ctx };
      });
      await eventsCommitted(deps);
      return { subscriber: subscriberToProto(state, ctx.catalog) };
    },

    async getSubscriber(req) {
      const accountId = accountOf(req);
      const [s, catalog] = await Promise.all([existing(accountId, req.subscriberId), loadCatalog(deps, accountId)]);
      return { subscriber: subscriberToProto(s, catalog) };
    },

    async getSubscriberByEmail(req) {
      const accountId = accountOf(req);
      const email = canonicalEmail(req.email);
      const s = await subscribers.getByEmail(accountId, email);
      if (!s) throw notFound('subscriber_not_found', `no subscriber has the email ${email}`);
      return { subscriber: subscriberToProto(s, await loadCatalog(deps, accountId)) };
    },

    async deleteSubscriber(req) {
      const accountId = accountOf(req);
      const id = parseId(req.subscriberId, 'subscriberId');
      const now = nowOf(deps);
      await atomically(store, async (tx) => {
        const [s, catalog] = await Promise.all([subscribers.get(accountId, id), loadCatalog(deps, accountId)]);
        if (!s) throw subscriberNotFound(id);
        await subscribers.write(tx, accountId, { deletes: [s], events: [deletedEvent(accountId, s, { catalog }, now)] }, now);
      });
      await eventsCommitted(deps);
      return {};
    },

    async listSubscribers(req) {
      const accountId = accountOf(req);
      const page = pageWindow(req.pageNumber, req.pageSize);
      const status = statusFromProto(req.status, 'status');
      const tagId = req.tagId ? parseId(req.tagId, 'tagId') : undefined;
      const topicId = req.topicId ? parseId(req.topicId, 'topicId') : undefined;
      const prefix = req.search ? prefixPattern(req.search) : undefined;
      const segmentId = req.segmentId ? parseId(req.segmentId, 'segmentId') : undefined;
      if (tagId && !(await deps.catalog.getTag(accountId, tagId))) throw notFound('tag_not_found', `tag ${tagId} does not exist`);
      if (topicId && !(await deps.catalog.getTopic(accountId, topicId))) throw notFound('topic_not_found', `topic ${topicId} does not exist`);
      const { items, total, counts } = segmentId
        ? await segmentPage(accountId, segmentId, { status, tagId, topicId, search: prefix && prefix !== '^' ? req.search!.trim() : undefined }, page)
        : await subscribers.list(accountId, { status, tagId, topicId, prefix: prefix === '^' ? undefined : prefix }, page.skip, page.pageSize);
      return {
        items: items.map(overviewToProto),
        pageNumber: page.pageNumber,
        pageSize: page.pageSize,
        totalItems: String(total),
        totalPages: Math.ceil(total / page.pageSize),
        statusCounts: {
          unconfirmed: String(counts.UNCONFIRMED),
          active: String(counts.ACTIVE),
          unsubscribed: String(counts.UNSUBSCRIBED),
          bounced: String(counts.BOUNCED),
          complained: String(counts.COMPLAINED),
          blocked: String(counts.BLOCKED),
        },
      };
    },

    async syncSubscribers(req) {
      const accountId = accountOf(req);
      assertSyncSize(req.subscribers.length);
      const mode = syncModeFromProto(req.mode);
      const rows: SyncRow[] = req.subscribers.map((r, i) => {
        try {
          return subscriberInputFromProto(r, `subscribers[${i}].`);
        } catch (err) {
          if (err instanceof DomainError) return { unreadable: err, email: r.email };
          throw err;
        }
      });
      await awaitEventBacklog(deps);
      await ensureDefaultTopic(deps, accountId);
      const now = nowOf(deps);
      const plan = await atomically(store, async (tx: Transaction) => {
        const [ctx, existingByEmail] = await Promise.all([loadDefinitions(deps, accountId), subscribers.findByEmails(accountId, syncEmails(rows))]);
        const plan = planSync(rows, mode, ctx, existingByEmail, () => newIdOf(deps), now);
        const events: DomainEvent[] = [
          ...plan.creates.map((s) => createdEvent(accountId, s, ctx, now)),
          ...plan.updates.flatMap((u) => changeEvents(accountId, u.before, u.after, u.diff, ctx, now)),
        ];
        try {
          await subscribers.write(tx, accountId, { inserts: plan.creates, updates: plan.updates, events }, now);
        } catch (err) {
          // an email created concurrently by another request (MongoDB): plan the request again
          if (err instanceof DomainError && err.errorId === 'subscriber_email_exists') throw new ConcurrentChange('subscriber email');
          throw err;
        }
        return plan;
      });
      if (plan.creates.length || plan.updates.length) await eventsCommitted(deps);
      return {
        results: plan.results.map((r) => ({
          index: r.index,
          email: r.email,
          subscriberId: r.subscriberId,
          outcome: syncOutcomeToProto(r.outcome),
          errorId: r.errorId,
          message: r.message,
        })),
      };
    },

    async getSubscriberData(req) {
      const accountId = accountOf(req);
      const [s, catalog] = await Promise.all([existing(accountId, req.subscriberId), loadCatalog(deps, accountId)]);
      return { data: subscriberDataToProto(s, catalog) };
    },

    async replaceSubscriberData(req) {
      const accountId = accountOf(req);
      const status = statusFromProto(req.subscriberStatus);
      return dataResponse(
        await modify(accountId, req.subscriberId, (current, ctx) =>
          replaceData(current, { email: req.email, firstName: req.firstName ?? null, status, fields: fieldInputsFromProto(req.fields), tags: req.tags }, ctx),
        ),
      );
    },

    async replaceSubscriberEmail(req) {
      const accountId = accountOf(req);
      return dataResponse(await modify(accountId, req.subscriberId, (current) => ({ ...current, email: canonicalEmail(req.email) })));
    },

    async replaceSubscriberFirstName(req) {
      const accountId = accountOf(req);
      return dataResponse(await modify(accountId, req.subscriberId, (current) => ({ ...current, firstName: normalizeFirstName(req.firstName ?? null) })));
    },

    async replaceSubscriberStatus(req) {
      const accountId = accountOf(req);
      const status = statusFromProto(req.subscriberStatus);
      return dataResponse(await modify(accountId, req.subscriberId, (current) => ({ ...current, status: manualStatus(status) })));
    },

    async getSubscriberTopics(req) {
      const accountId = accountOf(req);
      await ensureDefaultTopic(deps, accountId);
      const [state, ctx] = await Promise.all([existing(accountId, req.subscriberId), loadDefinitions(deps, accountId)]);
      return topicsResponse({ state, ctx });
    },

    async replaceSubscriberTopics(req) {
      const accountId = accountOf(req);
      return topicsResponse(
        await modify(accountId, req.subscriberId, (current, ctx) => ({ ...current, ...replaceTopics(current, validateTopicRefs(req.topicIds, ctx.topics), req.overrideOptOuts) })),
      );
    },

    async optOutOfTopic(req) {
      const accountId = accountOf(req);
      const topicId = parseId(req.topicId, 'topicId');
      const source = validateOptOutSource(req.source);
      return topicsResponse(
        await modify(accountId, req.subscriberId, (current, ctx, now) => {
          if (!ctx.topics.has(topicId)) throw notFound('topic_not_found', `topic ${topicId} does not exist`);
          return { ...current, ...optOutOfTopic(current, topicId, now, source) };
        }),
      );
    },

    async listFieldValues(req) {
      const accountId = accountOf(req);
      const [s, catalog] = await Promise.all([existing(accountId, req.subscriberId), loadCatalog(deps, accountId)]);
      return { values: fieldEntriesToProto(s, catalog) };
    },

    async setFieldValue(req) {
      const accountId = accountOf(req);
      const fieldId = parseValueFieldId(req.fieldId, 'fieldId');
      const value = valueFromProto(req.value);
      const { state, ctx } = await modify(accountId, req.subscriberId, (current, ctx) => {
        const field = ctx.catalog.byId.get(fieldId);
        if (!field) throw notFound('field_not_found', `field ${fieldId} does not exist`);
        return { ...current, fields: { ...current.fields, [fieldId]: validateValue(field, value, ctx.catalog, current.fields[fieldId], 'value') } };
      });
      const field = ctx.catalog.byId.get(fieldId)!;
      return { value: { fieldId, personalizationTagName: field.personalizationTagName, value: valueToProto(field, state.fields[fieldId], ctx.catalog) } };
    },

    async deleteFieldValue(req) {
      const accountId = accountOf(req);
      const fieldId = parseValueFieldId(req.fieldId, 'fieldId');
      await modify(accountId, req.subscriberId, (current, ctx) => {
        if (!ctx.catalog.byId.has(fieldId)) throw notFound('field_not_found', `field ${fieldId} does not exist`);
        if (current.fields[fieldId] === undefined) return current;
        const { [fieldId]: _removed, ...rest } = current.fields;
        return { ...current, fields: rest };
      });
      return {};
    },

    async addTagsToSubscribers(req) {
      const r = await bulkTag(req, planTagAdd);
      return {
        selectedSubscriberCount: r.selectedSubscriberCount,
        taggedSubscriberCount: r.taggedSubscriberCount,
        alreadyTaggedSubscriberCount: r.alreadyTaggedSubscriberCount,
        skippedSubscriberCount: r.skippedSubscriberCount,
        skippedByStatus: skipped(r),
      };
    },

    async removeTagsFromSubscribers(req) {
      const r = await bulkTag(req, planTagRemove);
      return {
        selectedSubscriberCount: r.selectedSubscriberCount,
        updatedSubscriberCount: r.updatedSubscriberCount,
        withoutSelectedTagsSubscriberCount: r.withoutSelectedTagsSubscriberCount,
        skippedSubscriberCount: r.skippedSubscriberCount,
        skippedByStatus: skipped(r),
      };
    },
  };
}
