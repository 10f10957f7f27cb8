// Building and changing one subscriber against the account's catalog, tags and topics (pure).
// Every function validates everything first and returns a new state; nothing is half-applied.
import { canonicalEmail } from './email';
import { Catalog } from './fields';
import { manualStatus, normalizeFirstName, statusForNewSubscriber } from './subscriber';
import { addTags, validateTagRefs } from './tags';
import { initialTopics, joinTopics, validateTopicRefs } from './topics';
import type { FieldValueInput, StoredValue, SubscriberInput, SubscriberState, TagDef, TopicDef } from './types';
import { assertRequiredFields, sameValue, validateFieldValues } from './values';

/** What an account defines that subscriber data refers to (fields, tags, topics), loaded once per request. */
export interface AccountDefinitions {
  catalog: Catalog;
  tags: ReadonlyMap<string, TagDef>;
  topics: ReadonlyMap<string, TopicDef>;
}

/** AddSubscriber and sync rows that create: a complete new subscriber (version 1), required fields enforced. */
export function newSubscriber(input: SubscriberInput, defs: AccountDefinitions, id: string, now: string): SubscriberState {
  const email = canonicalEmail(input.email);
  const firstName = normalizeFirstName(input.firstName);
  const status = statusForNewSubscriber(input.status);
  const tags = validateTagRefs(input.tags, (t) => defs.tags.get(t)?.id);
  const topicIds = initialTopics(input.topicIds, defs.topics);
  const fields = validateFieldValues(input.fields, defs.catalog, {});
  assertRequiredFields(defs.catalog, fields);
  return { id, email, firstName, status, tags, topicIds, optOuts: [], fields, registeredAt: now, version: 1 };
}

/**
 * A sync row for an existing subscriber: the members the row carries are applied (first name and
 * status when given, each given field value replaces that field's value, given tags are added,
 * given topics joined unless personally opted out); the email stays (it is how the row matched).
 */
export function mergeSyncRow(current: SubscriberState, input: SubscriberInput, defs: AccountDefinitions): SubscriberState {
  canonicalEmail(input.email);
  const firstName = input.firstName === undefined ? current.firstName : normalizeFirstName(input.firstName);
  const status = input.status === undefined ? current.status : manualStatus(input.status);
  const tags = addTags(current.tags, validateTagRefs(input.tags, (t) => defs.tags.get(t)?.id));
  const membership = input.topicIds === undefined ? current : joinTopics(current, validateTopicRefs(input.topicIds, defs.topics));
  const given = validateFieldValues(input.fields, defs.catalog, current.fields);
  const fields = Object.keys(given).length ? { ...current.fields, ...given } : current.fields;
  return { ...current, firstName, status, tags, topicIds: membership.topicIds, optOuts: membership.optOuts, fields };
}

/** ReplaceSubscriberData: email, first name, manual status, the complete value set and tag set. */
export function replaceData(
  current: SubscriberState,
  req: { email: string; firstName: string | null | undefined; status: SubscriberState['status'] | undefined; fields: readonly FieldValueInput[]; tags: readonly string[] },
  defs: AccountDefinitions,
): SubscriberState {
  const email = canonicalEmail(req.email);
  const firstName = normalizeFirstName(req.firstName);
  const status = manualStatus(req.status);
  const fields = validateFieldValues(req.fields, defs.catalog, current.fields);
  assertRequiredFields(defs.catalog, fields);
  const tags = validateTagRefs(req.tags, (t) => defs.tags.get(t)?.id);
  return { ...current, email, firstName, status, fields, tags };
}

/** What differs between two versions of a subscriber. */
export interface SubscriberDiff {
  changed: boolean;
  /** Which parts changed: email, firstName, status, tags, topics, optOuts, fields. */
  parts: string[];
  tagsAdded: string[];
  tagsRemoved: string[];
  topicsAdded: string[];
  topicsRemoved: string[];
  fieldIds: string[];
}

export function diffSubscriber(before: SubscriberState, after: SubscriberState): SubscriberDiff {
  const parts: string[] = [];
  if (before.email !== after.email) parts.push('email');
  if (before.firstName !== after.firstName) parts.push('firstName');
  if (before.status !== after.status) parts.push('status');
  const tagsAdded = minus(after.tags, before.tags);
  const tagsRemoved = minus(before.tags, after.tags);
  if (tagsAdded.length || tagsRemoved.length) parts.push('tags');
  const topicsAdded = minus(after.topicIds, before.topicIds);
  const topicsRemoved = minus(before.topicIds, after.topicIds);
  if (topicsAdded.length || topicsRemoved.length) parts.push('topics');
  if (!sameOptOuts(before, after)) parts.push('optOuts');
  const fieldIds = changedFields(before.fields, after.fields);
  if (fieldIds.length) parts.push('fields');
  return { changed: parts.length > 0, parts, tagsAdded, tagsRemoved, topicsAdded, topicsRemoved, fieldIds };
}

function minus(a: readonly string[], b: readonly string[]): string[] {
  const drop = new Set(b);
  return a.filter((x) => !drop.has(x));
}

function sameOptOuts(a: SubscriberState, b: SubscriberState): boolean {
  if (a.optOuts.length !== b.optOuts.length) return false;
  return a.optOuts.every((o, i) => o.topicId === b.optOuts[i].topicId && o.at === b.optOuts[i].at && o.source === b.optOuts[i].source);
}

function changedFields(a: Record<string, StoredValue>, b: Record<string, StoredValue>): string[] {
  const ids = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...ids].filter((id) => !sameValue(a[id], b[id])).sort();
}
