import type { subscriberV1 } from '@mailer/proto';
import type { QueryOf, Schemas } from '../openapi/types';
import { BuiltInFields, SubscriberStatuses, SyncModes, SyncOutcomes, type SubscriberStatus, type SyncMode } from './enums';
import { fieldValueInputFromProto, fieldValueInputToProto } from './field-values';
import { int64, present } from './numbers';

// Subscribers: API bodies (as validated by the OpenAPI document) <-> subscriber service messages.
// Pure functions; the routes only call them.

const ids = (xs: string[]) => xs.map((x) => x.toLowerCase());

export function fieldRefJson(ref: subscriberV1.FieldRef | undefined) {
  const r = present(ref?.ref, 'a field reference');
  return r.$case === 'fieldId' ? { type: 'CUSTOM' as const, fieldId: r.value } : { type: 'BUILT_IN' as const, builtInField: BuiltInFields.fromProto(r.value) };
}

/** Subscriber (read record); optional members appear only when recorded. */
export function subscriberJson(s: subscriberV1.Subscriber) {
  return {
    id: s.id,
    email: s.email,
    firstName: s.firstName ?? null,
    subscriberStatus: SubscriberStatuses.fromProto(s.subscriberStatus),
    values: s.values.map((v) => ({
      fieldRef: fieldRefJson(v.fieldRef),
      personalizationTagName: v.personalizationTagName,
      label: v.label,
      displayValue: v.displayValue,
    })),
    tags: s.tags,
    registeredAt: s.registeredAt,
    ...(s.lastImportedAtUtc ? { lastImportedAtUtc: s.lastImportedAtUtc } : {}),
    ...(s.gdprAgreement ? { gdprAgreement: s.gdprAgreement } : {}),
  };
}

export function overviewJson(s: subscriberV1.SubscriberOverview) {
  return {
    id: s.id,
    email: s.email,
    firstName: s.firstName ?? null,
    subscriberStatus: SubscriberStatuses.fromProto(s.subscriberStatus),
    tags: s.tags,
    registeredAt: s.registeredAt,
  };
}

/** One member per status (zeros included), in the proto's field names (`active` for ACTIVE). */
export function statusCountsJson(c: subscriberV1.StatusCounts | undefined): Record<SubscriberStatus, number> {
  const counts = present(c, 'statusCounts') as unknown as Record<string, string>;
  return Object.fromEntries(SubscriberStatuses.names.map((s) => [s, int64(counts[s.toLowerCase()])])) as Record<SubscriberStatus, number>;
}

export function pageJson(page: subscriberV1.ListSubscribersResponse) {
  return {
    items: page.items.map(overviewJson),
    pageNumber: page.pageNumber,
    pageSize: page.pageSize,
    totalItems: int64(page.totalItems),
    totalPages: page.totalPages,
    statusCounts: statusCountsJson(page.statusCounts),
  };
}

export function listSubscribersToProto(accountId: string, q: QueryOf<'listSubscribers'>): subscriberV1.ListSubscribersRequest {
  return {
    accountId,
    pageNumber: q.pageNumber,
    pageSize: q.pageSize,
    status: SubscriberStatuses.toProtoOrUnspecified(q.status),
    tagId: q.tagId?.toLowerCase(),
    topicId: q.topicId?.toLowerCase(),
    search: q.search,
    segmentId: q.segmentId?.toLowerCase(),
  };
}

/**
 * AddSubscriber. Absent members stay distinguishable for the service: no status is UNSPECIFIED
 * (ACTIVE on create; "leave as is" when a sync row updates), no topicIds is `topicIdsGiven: false`
 * (the default topic on create) while `[]` joins none. `first_name` has no "given" flag, so
 * `firstName: null` travels as "" (a blank name is none for the service): null then clears the
 * name of an existing subscriber in a sync row, where an absent firstName leaves it.
 */
export function addSubscriberToProto(accountId: string, body: Schemas['AddSubscriber']): subscriberV1.AddSubscriberRequest {
  return {
    accountId,
    email: body.email,
    firstName: body.firstName === null ? '' : body.firstName,
    subscriberStatus: SubscriberStatuses.toProtoOrUnspecified(body.subscriberStatus),
    fields: (body.fields ?? []).map(fieldValueInputToProto),
    tags: ids(body.tags ?? []),
    topicIds: ids(body.topicIds ?? []),
    topicIdsGiven: body.topicIds !== undefined,
  };
}

/** SubscriberData: `fields` sorted by fieldId and `tags` by id (the service sorts; kept as answered). */
export function subscriberDataJson(d: subscriberV1.SubscriberData | undefined) {
  const data = present(d, 'subscriber data');
  return {
    subscriberId: data.subscriberId,
    email: data.email,
    firstName: data.firstName ?? null,
    subscriberStatus: SubscriberStatuses.fromProto(data.subscriberStatus),
    fields: data.fields.map(fieldValueInputFromProto),
    tags: data.tags,
  };
}

export function replaceSubscriberDataToProto(accountId: string, subscriberId: string, body: Schemas['ReplaceSubscriberData']): subscriberV1.ReplaceSubscriberDataRequest {
  return {
    accountId,
    subscriberId,
    email: body.email,
    firstName: body.firstName ?? undefined,
    subscriberStatus: SubscriberStatuses.toProto(body.subscriberStatus),
    fields: body.fields.map(fieldValueInputToProto),
    tags: ids(body.tags),
  };
}

/** `{topics: [{topicId, label, subscribed, optedOut, optedOutAt}]}`; optedOutAt is null unless opted out. */
export function subscriberTopicsJson(topics: subscriberV1.SubscriberTopic[]) {
  return {
    topics: topics.map((t) => ({
      topicId: t.topicId,
      label: t.label,
      subscribed: t.subscribed,
      optedOut: t.optedOut,
      optedOutAt: t.optedOutAt ?? null,
    })),
  };
}

export function replaceSubscriberTopicsToProto(accountId: string, subscriberId: string, body: Schemas['ReplaceSubscriberTopics']): subscriberV1.ReplaceSubscriberTopicsRequest {
  return { accountId, subscriberId, topicIds: ids(body.topicIds), overrideOptOuts: body.overrideOptOuts };
}

export function taggingToProto(accountId: string, body: Schemas['SelectedSubscriberTaggingRequest']) {
  return { accountId, subscriberIds: ids(body.subscriberIds), tagIds: ids(body.tagIds) };
}

export function taggingAddResultJson(r: subscriberV1.AddTagsToSubscribersResponse) {
  return {
    selectedSubscriberCount: r.selectedSubscriberCount,
    taggedSubscriberCount: r.taggedSubscriberCount,
    alreadyTaggedSubscriberCount: r.alreadyTaggedSubscriberCount,
    skippedSubscriberCount: r.skippedSubscriberCount,
    skippedByStatus: { ...r.skippedByStatus },
  };
}

export function taggingRemovalResultJson(r: subscriberV1.RemoveTagsFromSubscribersResponse) {
  return {
    selectedSubscriberCount: r.selectedSubscriberCount,
    updatedSubscriberCount: r.updatedSubscriberCount,
    withoutSelectedTagsSubscriberCount: r.withoutSelectedTagsSubscriberCount,
    skippedSubscriberCount: r.skippedSubscriberCount,
    skippedByStatus: { ...r.skippedByStatus },
  };
}

// ---- sync --------------------------------------------------------------------------------------

/** A row the gateway already refused (schema), answered FAILED without reaching the service. */
export type RefusedRow = Required<Pick<Schemas['SyncResult'], 'index' | 'email' | 'errorId' | 'message'>>;

/**
 * The sync request of the rows that passed validation. The service numbers its results by the
 * position in this request; `indexes[i]` is the client's index of that row.
 */
export function syncToProto(accountId: string, mode: SyncMode, rows: Array<{ index: number; row: Schemas['AddSubscriber'] }>) {
  return {
    request: { accountId, mode: SyncModes.toProto(mode), subscribers: rows.map(({ row }) => addSubscriberToProto('', row)) } satisfies subscriberV1.SyncSubscribersRequest,
    indexes: rows.map(({ index }) => index),
  };
}

/** Results of the service (renumbered to the client's indexes) and refused rows, in the client's order. */
export function syncResultsJson(response: subscriberV1.SyncSubscribersResponse | undefined, indexes: number[], refused: RefusedRow[]): Schemas['SyncSubscribersResponse'] {
  const results: Schemas['SyncResult'][] = (response?.results ?? []).map((r) => {
    const index = indexes[r.index];
    if (index === undefined) throw new Error(`the service answered a sync result for row ${r.index} of ${indexes.length}`);
    return {
      index,
      email: r.email,
      subscriberId: r.subscriberId ?? null,
      outcome: SyncOutcomes.fromProto(r.outcome),
      ...(r.errorId !== undefined ? { errorId: r.errorId } : {}),
      ...(r.message !== undefined ? { message: r.message } : {}),
    };
  });
  for (const r of refused) results.push({ index: r.index, email: r.email, subscriberId: null, outcome: 'FAILED', errorId: r.errorId, message: r.message });
  if (results.length !== indexes.length + refused.length) throw new Error(`the service answered ${results.length - refused.length} sync results for ${indexes.length} rows`);
  return { results: results.sort((a, b) => a.index - b.index) };
}
