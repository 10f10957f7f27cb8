// SegmentService: saved segments (CRUD), counts and previews over the contact projection.
import { randomUUID } from 'node:crypto';
import { accountOf, conflict, failedPrecondition, invalid, notFound, type AsyncHandlers } from '@mailer/kit';
import type { segmentV1 } from '@mailer/proto';
import { DuplicateKeyError } from '@mailer/store';
import type { CatalogSource } from '../clients/catalog';
import { compileSegment, type Filter } from '../domain/compile';
import type { SegmentExpression } from '../domain/expression';
import { referencedSegmentIds, validateExpression, type ValidateOptions } from '../domain/validate';
import type { ProjectedContact } from '../store/contacts';
import type { Collection } from '@mailer/store';
import type { SegmentDoc } from '../store/segments';
import type { PurchaseSourceDoc } from '../store/purchase-sources';
import { sourceFacts } from './purchases';
import { expressionFromProto, segmentToProto } from './mapping';

export interface SegmentDeps {
  segments: Collection<SegmentDoc>;
  contacts: Collection<ProjectedContact>;
  catalog: CatalogSource;
  /** The account's purchase sources (absent: the account has none). */
  purchaseSources?: Collection<PurchaseSourceDoc>;
  /**
   * Read-after-write: resolves once the contact projection has applied every DOMAIN message published
   * before the call, or throws UNAVAILABLE `segment_projection_lagging` (server.ts). Called first by
   * counts and previews. Absent (unit tests): they read the projection as it is.
   */
  awaitProjection?: () => Promise<void>;
  now?: () => Date;
  newId?: () => string;
}

type Names =
  | 'createSegment'
  | 'getSegment'
  | 'listSegments'
  | 'updateSegment'
  | 'deleteSegment'
  | 'countSegment'
  | 'previewSegment'
  | 'previewExpression';

export const PREVIEW_CONTACTS = 25;
const NAME_MAX = 200;

const segmentNotFound = (id: string) => notFound('segment_not_found', `segment ${id} does not exist`);

function nameOf(raw: string): string {
  const name = (raw ?? '').trim();
  if (name === '' || name.length > NAME_MAX) {
    throw invalid('validation_failed', `name must be 1 to ${NAME_MAX} characters`, [{ path: 'name', problem: `must be 1 to ${NAME_MAX} characters, not blank` }]);
  }
  return name;
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

/** The account's segments, oldest first. */
const segmentsOf = (deps: Pick<SegmentDeps, 'segments'>, accountId: string) => deps.segments.find({ accountId }, { sort: { createdAt: 1, _id: 1 } });

/** The account's purchase sources, oldest first (none without a purchase-source collection). */
const purchaseSourcesOf = (deps: Pick<SegmentDeps, 'purchaseSources'>, accountId: string): Promise<PurchaseSourceDoc[]> =>
  deps.purchaseSources ? deps.purchaseSources.find({ accountId }, { sort: { createdAt: 1, _id: 1 } }) : Promise.resolve([]);

/**
 * The compiled filters of an expression, with the facts it needs (now, segments, topics, purchase
 * sources) and the capture scopes of the purchase sources it ranges over. Counts, previews and
 * member lists (members.ts) all go through here.
 */
export async function compileFor(deps: SegmentDeps, accountId: string, expression: SegmentExpression, stored?: SegmentDoc[]) {
  const all = stored ?? (await segmentsOf(deps, accountId));
  const byId = new Map(all.map((s) => [s._id, s.expression] as const));
  const activeTopicIds = usesOptOut(expression, byId) ? (await deps.catalog.topics(accountId)).filter((t) => t.active).map((t) => t.id) : [];
  const scope = purchaseSourcesInScope(expression, byId);
  const sources = scope.all || scope.ids.size > 0 ? await purchaseSourcesOf(deps, accountId) : [];
  const compiled = compileSegment(expression, { accountId, now: deps.now ? deps.now() : new Date(), segments: Object.fromEntries(byId), purchaseSources: sources.map(sourceFacts), activeTopicIds });
  const inScope = sources.filter((s) => scope.all || scope.ids.has(s._id));
  const captureScopes: segmentV1.PurchaseCaptureScope[] = inScope.map((s) => ({
    sourceId: s._id,
    name: s.name,
    timeZone: s.timeZone,
    capturedOrdersFromUtc: s.capturedOrdersFromUtc.toISOString(),
    capturedOrdersToUtc: s.capturedOrdersToUtc ? s.capturedOrdersToUtc.toISOString() : undefined,
    baselineOpen: s.baselineOpen,
    attributionStartedAtUtc: s.attributionStartedAtUtc.toISOString(),
  }));
  return { ...compiled, captureScopes };
}

export function segmentHandlers(deps: SegmentDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, Names> {
  const { segments, contacts, catalog } = deps;
  const now = () => (deps.now ? deps.now() : new Date());
  const newId = () => (deps.newId ? deps.newId() : randomUUID());

  async function load(accountId: string, id: string): Promise<SegmentDoc> {
    if (typeof id !== 'string' || id === '' || id.length > 100) throw segmentNotFound(String(id ?? ''));
    const doc = await segments.findOne({ _id: id, accountId });
    if (!doc) throw segmentNotFound(id);
    return doc;
  }

  const sourcesOf = (accountId: string) => purchaseSourcesOf(deps, accountId);
  const allOf = (accountId: string) => segmentsOf(deps, accountId);

  /** Validates an expression against the subscriber service's catalog and the account's segments. */
  async function validated(accountId: string, input: unknown, stored: SegmentDoc[], options: ValidateOptions = {}): Promise<SegmentExpression> {
    const [snapshot, sources] = await Promise.all([catalog.snapshot(accountId), sourcesOf(accountId)]);
    const result = validateExpression(input, { ...snapshot, segments: stored.map((s) => ({ id: s._id, expression: s.expression })), purchaseSourceIds: sources.map((s) => s._id) }, options);
    if (!result.valid) throw invalid(result.errorId, result.problems[0].problem, result.problems.map((p) => ({ path: p.path, problem: p.problem })));
    return result.expression;
  }

  const compile = (accountId: string, expression: SegmentExpression, stored?: SegmentDoc[]) => compileFor(deps, accountId, expression, stored);

  async function preview(accountId: string, expression: SegmentExpression, topicId: string | undefined, stored?: SegmentDoc[]): Promise<segmentV1.SegmentPreview> {
    const { trueFilter, unknownFilter, captureScopes } = await compile(accountId, expression, stored);
    const reach: Filter[] = [trueFilter, { subscriberStatus: 'ACTIVE' }];
    if (topicId) reach.push({ topics: topicId }, { 'optOuts.topicId': { $ne: topicId } });
    // All four over the account's contacts, issued together: the embedded store answers them in one
    // pass, testing what the filters share (the TRUE filter inside the others) once per contact. The
    // account condition stays at the top level of each so the store plans them all as that pass
    // (and MongoDB uses the accountId indexes).
    const [matching, unknown, reachable, first] = await Promise.all([
      contacts.countDocuments(trueFilter),
      contacts.countDocuments(unknownFilter),
      contacts.countDocuments({ accountId, $and: reach }),
      contacts.find(trueFilter, { sort: { registeredAt: 1, _id: 1 }, limit: PREVIEW_CONTACTS, projection: { email: 1, firstName: 1, subscriberStatus: 1 } }),
    ]);
    return {
      matchingCount: String(matching),
      unknownCount: String(unknown),
      reachableCount: String(reachable),
      contacts: first.map((c) => ({ id: c._id, email: c.email, firstName: c.firstName ?? undefined, subscriberStatus: c.subscriberStatus })),
      captureScopes,
    };
  }

  /** A preview's topicId must name an active topic of the account (API.md), never another account's. */
  async function topicOf(accountId: string, raw: string | undefined): Promise<string | undefined> {
    if (raw === undefined || raw === '') return undefined;
    const topic = (await catalog.topics(accountId)).find((t) => t.id === raw);
    if (!topic) throw notFound('topic_not_found', `topic ${raw} does not exist`);
    if (!topic.active) throw notFound('topic_not_found', `topic ${raw} is not active; a preview counts reach only for an active topic`);
    return topic.id;
  }

  return {
    async createSegment(req) {
      const accountId = accountOf(req);
      const name = nameOf(req.name);
      const stored = await allOf(accountId);
      const expression = await validated(accountId, expressionFromProto(req.expression), stored);
      const at = now();
      const doc: SegmentDoc = { _id: newId(), accountId, name, expression, references: [...new Set(referencedSegmentIds(expression))], createdAt: at, updatedAt: at };
      try {
        await segments.insertOne(doc);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('segment_name_taken', `a segment named "${name}" already exists`, [{ path: 'name', problem: 'already used by another segment' }]);
        throw err;
      }
      return { segment: segmentToProto(doc) };
    },

    async getSegment(req) {
      const accountId = accountOf(req);
      return { segment: segmentToProto(await load(accountId, req.segmentId)) };
    },

    async listSegments(req) {
      const accountId = accountOf(req);
      return { items: (await allOf(accountId)).map(segmentToProto) };
    },

    async updateSegment(req) {
      const accountId = accountOf(req);
      const current = await load(accountId, req.segmentId);
      const name = nameOf(req.name);
      const stored = await allOf(accountId);
      const expression = await validated(accountId, expressionFromProto(req.expression), stored, { segmentId: current._id, storedExpression: current.expression });
      const set = { name, expression, references: [...new Set(referencedSegmentIds(expression))], updatedAt: now() };
      try {
        const r = await segments.updateOne({ _id: current._id, accountId }, { $set: set });
        if (r.matchedCount === 0) throw segmentNotFound(current._id);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('segment_name_taken', `a segment named "${name}" already exists`, [{ path: 'name', problem: 'already used by another segment' }]);
        throw err;
      }
      return { segment: segmentToProto({ ...current, ...set }) };
    },

    async deleteSegment(req) {
      const accountId = accountOf(req);
      const current = await load(accountId, req.segmentId);
      const users = await segments.find({ accountId, references: current._id, _id: { $ne: current._id } }, { sort: { name: 1 } });
      if (users.length > 0) {
        throw failedPrecondition(
          'segment_in_use',
          `segment ${current._id} is referenced by ${users.length} other segment(s)`,
          users.map((u) => ({ path: `segments[${u._id}]`, problem: `referenced by segment "${u.name}"` })),
        );
      }
      await segments.deleteOne({ _id: current._id, accountId });
      return {};
    },

    async countSegment(req) {
      const accountId = accountOf(req);
      await deps.awaitProjection?.();
      const current = await load(accountId, req.segmentId);
      const { trueFilter } = await compile(accountId, current.expression);
      return { count: { subscriberCount: String(await contacts.countDocuments(trueFilter)) } };
    },

    async previewSegment(req) {
      const accountId = accountOf(req);
      await deps.awaitProjection?.();
      const current = await load(accountId, req.segmentId);
      const topicId = await topicOf(accountId, req.topicId);
      return { preview: await preview(accountId, current.expression, topicId) };
    },

    async previewExpression(req) {
      const accountId = accountOf(req);
      await deps.awaitProjection?.();
      const stored = await allOf(accountId);
      const [expression, topicId] = await Promise.all([validated(accountId, expressionFromProto(req.expression), stored), topicOf(accountId, req.topicId)]);
      return { preview: await preview(accountId, expression, topicId, stored) };
    },
  };
}
