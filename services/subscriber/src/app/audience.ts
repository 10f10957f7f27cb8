// Use case of AudienceService.ListAudience: one page of a send's recipients (DESIGN.md "Audiences"),
// in subscriber-id order after a keyset cursor. The cursor is an id, not a position: a reader who
// unsubscribes mid-send leaves the order without moving anyone onto a page already read, and each
// page costs what its subscribers cost (no skip, no count).
import { DomainError, GrpcStatus } from '@mailer/kit';
import type { Catalog } from '../domain/fields';
import { audiencePageSize, inAudience } from '../domain/subscriber';
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
}

export interface AudiencePage {
  recipients: SubscriberState[];
  /** The field catalog the recipients' values are displayed with: loaded once per page. */
  catalog: Catalog;
  /** The last id scanned (even when that subscriber was left out); '' when the scan reached the end. */
  next: string;
}

interface Scan {
  recipients: SubscriberState[];
  next: string;
}

export async function listAudience(deps: Deps, input: AudienceInput): Promise<AudiencePage> {
  const { accountId, topicId } = input;
  const limit = audiencePageSize(input.pageSize);
  if (topicId && !(await deps.catalog.getTopic(accountId, topicId))) throw topicNotFound(topicId);
  const [scan, catalog] = await Promise.all([input.segmentId ? segmentScan(deps, input, input.segmentId, limit) : storeScan(deps, input, limit), loadCatalog(deps, accountId)]);
  return { ...scan, catalog };
}

/** The account's ACTIVE subscribers (of the topic) from this service's store; one more than the page tells whether any follow. */
async function storeScan(deps: Deps, { accountId, topicId, after }: AudienceInput, limit: number): Promise<Scan> {
  const found = await deps.subscribers.activeAfter(accountId, { topicId, after }, limit + 1);
  const recipients = found.slice(0, limit);
  return { recipients, next: found.length > limit ? recipients[recipients.length - 1].id : '' };
}

/**
 * The segment's members from the segment service (it owns the projection and the compiler), loaded
 * from this service's store and checked again there: the projection may lag behind a status or topic
 * change, and this store is the one that says who may be mailed. The cursor follows the segment's
 * page, so a member dropped here is still scanned past.
 */
async function segmentScan(deps: Deps, { accountId, topicId, after }: AudienceInput, segmentId: string, limit: number): Promise<Scan> {
  if (!deps.segmentMembers) throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', 'the segment service is not configured');
  const page = await deps.segmentMembers.audience({ accountId, segmentId, topicId, afterSubscriberId: after, pageSize: limit });
  const ids = page.subscriberIds;
  const byId = new Map((await deps.subscribers.findByIds(accountId, ids)).map((s) => [s.id, s] as const));
  const recipients = ids.flatMap((id) => {
    const s = byId.get(id);
    return s && inAudience(s, topicId) ? [s] : [];
  });
  return { recipients, next: page.lastPage || ids.length === 0 ? '' : ids[ids.length - 1] };
}
