// Use cases of SegmentService's saved segments: one function per RPC (createSegment ... previewExpression),
// each of (deps, input) owning the loading, the validation against the catalog, and the writes.
import { failedPrecondition, invalid, notFound } from '@mailer/kit';
import { compileSegment, type Filter } from '../domain/compile';
import type { PurchaseSourceFacts } from '../domain/evaluation-facts';
import type { SegmentExpression } from '../domain/expression';
import { referencedSegmentIds, validateExpression, type ValidateOptions } from '../domain/validate';
import type { PurchaseSourceDoc } from '../store/purchase-sources';
import type { SegmentDoc } from '../store/segments';
import { newIdOf, nowOf, repositoriesOf, type SegmentDeps } from './deps';

export const PREVIEW_CONTACTS = 25;
const NAME_MAX = 200;
const ID_MAX = 100;

export const segmentNotFound = (id: string) => notFound('segment_not_found', `segment ${id} does not exist`);

function nameOf(raw: string): string {
  const name = (raw ?? '').trim();
  if (name === '' || name.length > NAME_MAX) {
    throw invalid('validation_failed', `name must be 1 to ${NAME_MAX} characters`, [{ path: 'name', problem: `must be 1 to ${NAME_MAX} characters, not blank` }]);
  }
  return name;
}

export function sourceFacts(s: PurchaseSourceDoc): PurchaseSourceFacts {
  return { id: s._id, timeZone: s.timeZone, capturedOrdersFromUtc: s.capturedOrdersFromUtc, capturedOrdersToUtc: s.capturedOrdersToUtc ?? null, baselineOpen: s.baselineOpen };
}

/**
 * Ids of the purchase sources the expression's PURCHASES conditions range over (with the segments it
 * references, transitively); `all` when some condition has no sourceId (every source of the account).
 */
function purchaseSourcesInScope(expression: SegmentExpression, segmentsById: ReadonlyMap<string, SegmentExpression>, acc = { all: false, ids: new Set<string>() }, seen = new Set<string>()) {
  for (const g of expression.conditionGroups) {
    for (const c of g.conditions) {
      if (c.subjectType === 'PURCHASES' && c.operand.purchase) {
        if (c.operand.purchase.sourceId) acc.ids.add(c.operand.purchase.sourceId);
        else acc.all = true;
      }
      const ref = c.subjectType === 'SEGMENT' ? c.operand.segmentId : null;
      if (ref && !seen.has(ref)) {
        seen.add(ref);
        const e = segmentsById.get(ref);
        if (e) purchaseSourcesInScope(e, segmentsById, acc, seen);
      }
    }
  }
  return acc;
}

/** Does the expression (or a segment it references, transitively) use TOPIC_OPTED_OUT? */
function usesOptOut(expression: SegmentExpression, all: ReadonlyMap<string, SegmentExpression>, seen = new Set<string>()): boolean {
  for (const g of expression.conditionGroups) {
    for (const c of g.conditions) {
      if (c.operator === 'TOPIC_OPTED_OUT') return true;
      const ref = c.subjectType === 'SEGMENT' ? c.operand.segmentId : null;
      if (ref && !seen.has(ref)) {
        seen.add(ref);
        const e = all.get(ref);
        if (e && usesOptOut(e, all, seen)) return true;
      }
    }
  }
  return false;
}

/**
 * The compiled filters of an expression, with the facts it needs (now, segments, topics, purchase
 * sources) and the purchase sources it ranges over (its capture scopes). Counts, previews and member
 * pages (segment-members.ts) all go through here.
 */
export async function compileFor(deps: SegmentDeps, accountId: string, expression: SegmentExpression, stored?: SegmentDoc[]) {
  const repos = repositoriesOf(deps, accountId);
  const all = stored ?? (await repos.segments.list());
  const byId = new Map(all.map((s) => [s._id, s.expression] as const));
  const activeTopicIds = usesOptOut(expression, byId) ? (await deps.catalog.topics(accountId)).filter((t) => t.active).map((t) => t.id) : [];
  const scope = purchaseSourcesInScope(expression, byId);
  const sources = scope.all || scope.ids.size > 0 ? await repos.purchaseSources() : [];
  const compiled = compileSegment(expression, { accountId, now: nowOf(deps), segments: Object.fromEntries(byId), purchaseSources: sources.map(sourceFacts), activeTopicIds });
  const captureScopes = sources.filter((s) => scope.all || scope.ids.has(s._id));
  return { ...compiled, captureScopes };
}

/** A saved segment of the account, or `404 segment_not_found`. */
export async function loadSegment(deps: SegmentDeps, accountId: string, id: string): Promise<SegmentDoc> {
  if (typeof id !== 'string' || id === '' || id.length > ID_MAX) throw segmentNotFound(String(id ?? ''));
  const doc = await repositoriesOf(deps, accountId).segments.get(id);
  if (!doc) throw segmentNotFound(id);
  return doc;
}

/** Validates an expression against the subscriber service's catalog and the account's segments. */
async function validated(deps: SegmentDeps, accountId: string, input: unknown, stored: SegmentDoc[], options: ValidateOptions = {}): Promise<SegmentExpression> {
  const [snapshot, sources] = await Promise.all([deps.catalog.snapshot(accountId), repositoriesOf(deps, accountId).purchaseSources()]);
  const result = validateExpression(input, { ...snapshot, segments: stored.map((s) => ({ id: s._id, expression: s.expression })), purchaseSourceIds: sources.map((s) => s._id) }, options);
  if (!result.valid) throw invalid(result.errorId, result.problems[0].problem, result.problems.map((p) => ({ path: p.path, problem: p.problem })));
  return result.expression;
}

/** A preview: the three counts, the first contacts, and the purchase sources it ranges over. */
export interface SegmentPreview {
  matching: number;
  unknown: number;
  reachable: number;
  contacts: Array<{ id: string; email: string; firstName: string | null | undefined; subscriberStatus: string }>;
  captureScopes: PurchaseSourceDoc[];
}

async function preview(deps: SegmentDeps, accountId: string, expression: SegmentExpression, topicId: string | undefined, stored?: SegmentDoc[]): Promise<SegmentPreview> {
  const { contacts } = repositoriesOf(deps, accountId);
  const { trueFilter, falseFilter, captureScopes } = await compileFor(deps, accountId, expression, stored);
  // the cheap conditions first: a contact that is not reachable is not tested against the expression
  const reach: Filter[] = [{ subscriberStatus: 'ACTIVE' }];
  if (topicId) reach.push({ topics: topicId }, { 'optOuts.topicId': { $ne: topicId } });
  reach.push(trueFilter);
  // All over the account's contacts, issued together. The account condition stays at the top level
  // of each, where both stores plan by it (an index prefix); the embedded store runs a count it
  // cannot answer from an index in slices on a connection of its own, so the service keeps
  // answering other calls meanwhile. Every contact is exactly one of TRUE, FALSE and UNKNOWN, so the
  // unknown ones are the rest: counting them would test the TRUE and the FALSE filter once more
  // (a quarter of a preview's work over a million contacts). The account's total is a kept count.
  const [total, matching, notMatching, reachable, first] = await Promise.all([
    contacts.count({}),
    contacts.count(trueFilter),
    contacts.count(falseFilter),
    contacts.count({ accountId, $and: reach }),
    contacts.find(trueFilter, { sort: { registeredAt: 1, _id: 1 }, limit: PREVIEW_CONTACTS, projection: { email: 1, firstName: 1, subscriberStatus: 1 } }),
  ]);
  // the reads are not one snapshot: contacts removed meanwhile must not make the rest negative
  const unknown = Math.max(0, total - matching - notMatching);
  return { matching, unknown, reachable, contacts: first.map((c) => ({ id: c._id, email: c.email, firstName: c.firstName, subscriberStatus: c.subscriberStatus })), captureScopes };
}

/** A preview's topicId must name an active topic of the account (the API contract), never another account's. */
async function topicOf(deps: SegmentDeps, accountId: string, raw: string | undefined): Promise<string | undefined> {
  if (raw === undefined || raw === '') return undefined;
  const topic = (await deps.catalog.topics(accountId)).find((t) => t.id === raw);
  if (!topic) throw notFound('topic_not_found', `topic ${raw} does not exist`);
  if (!topic.active) throw notFound('topic_not_found', `topic ${raw} is not active; a preview counts reach only for an active topic`);
  return topic.id;
}

/** What CreateSegment and UpdateSegment are given: the name and the expression as mapped from the request. */
export interface SegmentInput {
  name: string;
  expression: unknown;
}

export async function createSegment(deps: SegmentDeps, accountId: string, input: SegmentInput): Promise<SegmentDoc> {
  const { segments } = repositoriesOf(deps, accountId);
  const name = nameOf(input.name);
  const stored = await segments.list();
  const expression = await validated(deps, accountId, input.expression, stored);
  const at = nowOf(deps);
  return segments.insert({ _id: newIdOf(deps), name, expression, references: [...new Set(referencedSegmentIds(expression))], createdAt: at, updatedAt: at });
}

export const getSegment = (deps: SegmentDeps, accountId: string, segmentId: string): Promise<SegmentDoc> => loadSegment(deps, accountId, segmentId);

export const listSegments = (deps: SegmentDeps, accountId: string): Promise<SegmentDoc[]> => repositoriesOf(deps, accountId).segments.list();

export async function updateSegment(deps: SegmentDeps, accountId: string, segmentId: string, input: SegmentInput): Promise<SegmentDoc> {
  const { segments } = repositoriesOf(deps, accountId);
  const current = await loadSegment(deps, accountId, segmentId);
  const name = nameOf(input.name);
  const stored = await segments.list();
  const expression = await validated(deps, accountId, input.expression, stored, { segmentId: current._id, storedExpression: current.expression });
  const set = { name, expression, references: [...new Set(referencedSegmentIds(expression))], updatedAt: nowOf(deps) };
  if (!(await segments.update(current._id, set))) throw segmentNotFound(current._id);
  return { ...current, ...set };
}

export async function deleteSegment(deps: SegmentDeps, accountId: string, segmentId: string): Promise<void> {
  const { segments } = repositoriesOf(deps, accountId);
  const current = await loadSegment(deps, accountId, segmentId);
  const users = await segments.referencing(current._id);
  if (users.length > 0) {
    throw failedPrecondition(
      'segment_in_use',
      `segment ${current._id} is referenced by ${users.length} other segment(s)`,
      users.map((u) => ({ path: `segments[${u._id}]`, problem: `referenced by segment "${u.name}"` })),
    );
  }
  // Then what other services send to it (409 segment_in_use as well; 503 when one does not answer).
  await deps.references?.refuseWhileReferenced(accountId, 'SEGMENT', current._id);
  await segments.remove(current._id);
}

export async function countSegment(deps: SegmentDeps, accountId: string, segmentId: string): Promise<number> {
  await deps.awaitProjection?.();
  const current = await loadSegment(deps, accountId, segmentId);
  const { trueFilter } = await compileFor(deps, accountId, current.expression);
  return repositoriesOf(deps, accountId).contacts.count(trueFilter);
}

export async function previewSegment(deps: SegmentDeps, accountId: string, segmentId: string, topicId: string | undefined): Promise<SegmentPreview> {
  await deps.awaitProjection?.();
  const current = await loadSegment(deps, accountId, segmentId);
  const topic = await topicOf(deps, accountId, topicId);
  return preview(deps, accountId, current.expression, topic);
}

export async function previewExpression(deps: SegmentDeps, accountId: string, input: { expression: unknown; topicId: string | undefined }): Promise<SegmentPreview> {
  await deps.awaitProjection?.();
  const stored = await repositoriesOf(deps, accountId).segments.list();
  const [expression, topicId] = await Promise.all([validated(deps, accountId, input.expression, stored), topicOf(deps, accountId, input.topicId)]);
  return preview(deps, accountId, expression, topicId, stored);
}
