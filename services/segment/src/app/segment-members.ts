// Use case of SegmentService.ListSegmentMembers: one page of a saved segment's members, narrowed by the subscriber
// list's filters, over the contact projection. The subscriber service's ListSubscribers (segment_id)
// asks it for the page of ids, the total and the status counts, then loads the overviews from its own
// store, so each service keeps reading only its own data and no id list of a whole segment travels.
import { invalid, pageOf } from '@mailer/kit';
import type { Filter } from '../domain/compile';
import type { ContactReads } from '../store/contact-reads';
import { repositoriesOf, type SegmentDeps } from './deps';
import { compileFor, loadSegment } from './segments';


/** The subscriber statuses, in the order of SegmentMemberStatusCounts. */
export const SUBSCRIBER_STATUSES = ['UNCONFIRMED', 'ACTIVE', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED'] as const;
type Status = (typeof SUBSCRIBER_STATUSES)[number];

/** The subscriber list's search limit (subscriber service: LIMITS.search). */
const SEARCH_MAX = 320;
const ID_MAX = 100;

/**
 * The subscriber service's list search (domain/subscriber.ts prefixPattern), the same rule on the same
 * data: the trimmed, lowercased text as an escaped anchored prefix, matched against the canonical
 * (lowercase) email and against the first name ignoring case. Blank: no search.
 */
export function prefixPattern(search: string): string | undefined {
  const text = search.trim().toLowerCase();
  return text === '' ? undefined : `^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
}

function pageWindow(pageNumber: number, pageSize: number): { skip: number; limit: number } {
  const page = pageOf(pageNumber, pageSize);
  return { skip: page.skip, limit: page.pageSize };
}

export const optionalId = (raw: string | undefined, path: string): string | undefined => {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > ID_MAX) throw invalid('validation_failed', `${path} is too long`, [{ path, problem: 'too long' }]);
  return raw.toLowerCase();
};

async function countByStatus(contacts: ContactReads, filter: Filter): Promise<Record<Status, number>> {
  const perStatus = await Promise.all(SUBSCRIBER_STATUSES.map((s) => contacts.count({ ...filter, subscriberStatus: s })));
  return Object.fromEntries(SUBSCRIBER_STATUSES.map((s, i) => [s, perStatus[i]])) as Record<Status, number>;
}

/**
 * A page in (registeredAt, _id) order; past the middle it is read backwards from the end, as the
 * subscriber service's list does (the embedded store sorts everything up to skip + limit).
 */
async function page(contacts: ContactReads, filter: Filter, total: number, skip: number, limit: number): Promise<string[]> {
  if (skip >= total) return [];
  const projection = { _id: 1 as const };
  if (skip + limit / 2 <= total / 2) return (await contacts.find(filter, { sort: { registeredAt: 1, _id: 1 }, skip, limit, projection })).map((c) => c._id);
  const end = Math.min(total, skip + limit);
  const docs = await contacts.find(filter, { sort: { registeredAt: -1, _id: -1 }, skip: total - end, limit: end - skip, projection });
  return docs.map((c) => c._id).reverse();
}

/**
 * The saved segment's TRUE filter (members only, never UNKNOWN), once the projection has caught up:
 * member pages and audience pages (segment-audience.ts) read the same compiled filter.
 * NOT_FOUND segment_not_found for a segment the account does not have.
 */
export async function memberFilter(deps: SegmentDeps, accountId: string, rawSegmentId: string | undefined): Promise<Filter> {
  // Read-after-write first: an acknowledged subscriber write is in the projection before we read it.
  await deps.awaitProjection?.();
  const doc = await loadSegment(deps, accountId, String(rawSegmentId ?? '').toLowerCase());
  return (await compileFor(deps, accountId, doc.expression)).trueFilter;
}

/** ListSegmentMembers' input, as in the request (checked here). */
export interface MemberQuery {
  segmentId: string;
  pageNumber: number;
  pageSize: number;
  status?: string;
  tagId?: string;
  topicId?: string;
  search?: string;
}

export interface SegmentMembersPage {
  subscriberIds: string[];
  total: number;
  statusCounts: Record<Status, number>;
}

export async function listSegmentMembers(deps: SegmentDeps, accountId: string, req: MemberQuery): Promise<SegmentMembersPage> {
  const { contacts } = repositoriesOf(deps, accountId);
  const { skip, limit } = pageWindow(req.pageNumber, req.pageSize);
  const status = req.status === undefined || req.status === '' ? undefined : (req.status as Status);
  if (status !== undefined && !SUBSCRIBER_STATUSES.includes(status)) throw invalid('validation_failed', `unknown status ${String(req.status).slice(0, 40)}`, [{ path: 'status', problem: 'not a SubscriberStatus' }]);
  const tagId = optionalId(req.tagId, 'tagId');
  const topicId = optionalId(req.topicId, 'topicId');
  if ((req.search ?? '').length > SEARCH_MAX) throw invalid('validation_failed', `search is longer than ${SEARCH_MAX} characters`, [{ path: 'search', problem: 'too long' }]);
  const prefix = req.search ? prefixPattern(req.search) : undefined;

  // The list filters, exactly as the subscriber service applies them to its own store.
  const narrowing: Filter[] = [await memberFilter(deps, accountId, req.segmentId)];
  if (tagId) narrowing.push({ tags: tagId });
  if (topicId) narrowing.push({ topics: topicId });
  if (prefix) narrowing.push({ $or: [{ email: { $regex: prefix } }, { firstName: { $regex: prefix, $options: 'i' } }] });
  // accountId stays at the top level (it is inside the TRUE filter too): stores pick the account's
  // documents (index prefix, embedded partition) by it.
  const base: Filter = { accountId, $and: narrowing };
  const statusCounts = await countByStatus(contacts, base);
  const total = status ? statusCounts[status] : SUBSCRIBER_STATUSES.reduce((a, s) => a + statusCounts[s], 0);
  const filter: Filter = status ? { ...base, subscriberStatus: status } : base;
  return { subscriberIds: await page(contacts, filter, total, skip, limit), total, statusCounts };
}
