// Use cases of AudienceService: the pages of a send's recipients (docs/architecture.md "Audiences"), in
// subscriber-id order after a keyset cursor. The cursor is an id, not a position: a reader who
// unsubscribes mid-send leaves the order without moving anyone onto a page already read, and each
// page costs what its subscribers cost (no skip, no count). A broadcast reads every reader of the
// account instead (with_excluded), each with the first rule that leaves it out, and checks named
// readers again when their mail is queued later (CheckAudience).
import { DomainError, GrpcStatus, invalid } from '@mailer/kit';
import type { Catalog } from '../domain/fields';
import { audienceExclusion, audiencePageSize, inAudience, type StoreExclusion } from '../domain/subscriber';
import type { SubscriberState } from '../domain/types';
import { loadCatalog } from './definitions';
import type { Deps } from './deps';
import { topicNotFound } from './not-found';

/** Ids lowercased and checked by the handler; segmentId / topicId absent: not narrowed. */
export interface AudienceInput {
  accountId: string;
  segmentId?: string;
  topicId?: string;
  /** '' : from the first subscriber. */
  after: string;
  pageSize: number;
  /** Every subscriber of the account, each with its exclusion (null: a recipient). */
  withExcluded?: boolean;
}

export type AudienceExclusion = StoreExclusion | 'NOT_IN_SEGMENT' | 'SEGMENT_UNKNOWN';

export interface AudienceReader {
  subscriber: SubscriberState;
  exclusion: AudienceExclusion | null;
}

export interface AudiencePage {
  readers: AudienceReader[];
  /** The field catalog the recipients' values are displayed with: loaded once per page. */
  catalog: Catalog;
  /** The last id scanned (even when that subscriber was left out); '' when the scan reached the end. */
  next: string;
}

interface Scan {
  readers: AudienceReader[];
  next: string;
}

/** Subscribers named at once by CheckAudience and FindRecipients. */
export const MAX_NAMED = 1000;

export async function listAudience(deps: Deps, input: AudienceInput): Promise<AudiencePage> {
  const { accountId, topicId } = input;
  const limit = audiencePageSize(input.pageSize);
  if (topicId && !(await deps.catalog.getTopic(accountId, topicId))) throw topicNotFound(topicId);
  const scan = input.withExcluded ? wholeScan(deps, input, limit) : input.segmentId ? segmentScan(deps, input, input.segmentId, limit) : storeScan(deps, input, limit);
  const [page, catalog] = await Promise.all([scan, loadCatalog(deps, accountId)]);
  return { ...page, catalog };
}

/** The audience rules for named subscribers (ids lowercased by the handler), in id order; ids the account does not have are left out. */
export async function checkAudience(deps: Deps, input: { accountId: string; segmentId?: string; topicId?: string; subscriberIds: string[] }): Promise<{ readers: AudienceReader[]; catalog: Catalog }> {
  const { accountId, topicId } = input;
  if (input.subscriberIds.length > MAX_NAMED) throw invalid('validation_failed', `at most ${MAX_NAMED} subscriber ids`, [{ path: 'subscriberIds', problem: `more than ${MAX_NAMED}` }]);
  if (topicId && !(await deps.catalog.getTopic(accountId, topicId))) throw topicNotFound(topicId);
  const [found, catalog] = await Promise.all([deps.subscribers.findByIds(accountId, [...new Set(input.subscriberIds)]), loadCatalog(deps, accountId)]);
  found.sort((a, b) => (a.id < b.id ? -1 : 1));
  return { readers: await classify(deps, accountId, found, input), catalog };
}

/** The account's subscribers with these canonical addresses (a batch of mail's render values and statuses). */
export async function findRecipients(deps: Deps, accountId: string, emails: string[]): Promise<{ recipients: SubscriberState[]; catalog: Catalog }> {
  if (emails.length > MAX_NAMED) throw invalid('validation_failed', `at most ${MAX_NAMED} emails`, [{ path: 'emails', problem: `more than ${MAX_NAMED}` }]);
  const [found, catalog] = await Promise.all([deps.subscribers.findByEmails(accountId, [...new Set(emails)]), loadCatalog(deps, accountId)]);
  return { recipients: [...found.values()], catalog };
}

/** The account's ACTIVE subscribers (of the topic) from this service's store; one more than the page tells whether any follow. */
async function storeScan(deps: Deps, { accountId, topicId, after }: AudienceInput, limit: number): Promise<Scan> {
  const found = await deps.subscribers.activeAfter(accountId, { topicId, after }, limit + 1);
  const page = found.slice(0, limit);
  return { readers: page.map((subscriber) => ({ subscriber, exclusion: null })), next: found.length > limit ? page[page.length - 1].id : '' };
}

/** Every subscriber of the account, each classified by the rules (a broadcast's audience with its exclusion reasons). */
async function wholeScan(deps: Deps, input: AudienceInput, limit: number): Promise<Scan> {
  const found = await deps.subscribers.allAfter(input.accountId, input.after, limit + 1);
  const page = found.slice(0, limit);
  return { readers: await classify(deps, input.accountId, page, input), next: found.length > limit ? page[page.length - 1].id : '' };
}

/**
 * Each subscriber's first failing rule: status and topic from this store, then the segment's result
 * from the segment service (asked only for those that passed the others, in one call).
 */
async function classify(deps: Deps, accountId: string, subscribers: SubscriberState[], q: { segmentId?: string; topicId?: string }): Promise<AudienceReader[]> {
  const readers: AudienceReader[] = subscribers.map((subscriber) => ({ subscriber, exclusion: audienceExclusion(subscriber, q.topicId) }));
  const candidates = readers.filter((r) => r.exclusion === null);
  if (q.segmentId && candidates.length) {
    const members = requireSegmentService(deps);
    const results = await members.evaluate({ accountId, segmentId: q.segmentId, subscriberIds: candidates.map((r) => r.subscriber.id) });
    candidates.forEach((r, i) => {
      if (results[i] === 'FALSE') r.exclusion = 'NOT_IN_SEGMENT';
      else if (results[i] !== 'TRUE') r.exclusion = 'SEGMENT_UNKNOWN';
    });
  }
  return readers;
}

function requireSegmentService(deps: Deps) {
  if (!deps.segmentMembers) throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', 'the segment service is not configured');
  return deps.segmentMembers;
}

/**
 * The segment's members from the segment service (it owns the projection and the compiler), loaded
 * from this service's store and checked again there: the projection may lag behind a status or topic
 * change, and this store is the one that says who may be mailed. The cursor follows the segment's
 * page, so a member dropped here is still scanned past.
 */
async function segmentScan(deps: Deps, { accountId, topicId, after }: AudienceInput, segmentId: string, limit: number): Promise<Scan> {
  const page = await requireSegmentService(deps).audience({ accountId, segmentId, topicId, afterSubscriberId: after, pageSize: limit });
  const ids = page.subscriberIds;
  const byId = new Map((await deps.subscribers.findByIds(accountId, ids)).map((s) => [s.id, s] as const));
  const readers = ids.flatMap((id) => {
    const s = byId.get(id);
    return s && inAudience(s, topicId) ? [{ subscriber: s, exclusion: null }] : [];
  });
  return { readers, next: page.lastPage || ids.length === 0 ? '' : ids[ids.length - 1] };
}
