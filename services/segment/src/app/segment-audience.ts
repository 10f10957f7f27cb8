// Use case of SegmentService.ListSegmentAudience: one page of a saved segment's ACTIVE members in id
// order after a keyset cursor (the subscriber service's ListAudience pages a send's recipients with
// it). A keyset, not an offset: a member leaving the segment mid-send never shifts a later one onto
// a page already read. No counts: a send reads every page once and needs none.
import { invalid } from '@mailer/kit';
import type { Filter } from '../domain/compile';
import { repositoriesOf, type SegmentDeps } from './deps';
import { memberFilter, optionalId } from './segment-members';

const MAX_PAGE_SIZE = 1000;
const DEFAULT_PAGE_SIZE = 500;

export interface AudienceQuery {
  segmentId: string;
  topicId?: string;
  afterSubscriberId?: string;
  pageSize: number;
}

export interface SegmentAudiencePage {
  subscriberIds: string[];
  /** No member after the last id of this page. */
  lastPage: boolean;
}

export function audiencePageSize(raw: number | undefined): number {
  const size = raw || DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw invalid('validation_failed', `pageSize must be 1..${MAX_PAGE_SIZE} (0: ${DEFAULT_PAGE_SIZE})`, [{ path: 'pageSize', problem: `not 0..${MAX_PAGE_SIZE}` }]);
  }
  return size;
}

export async function listSegmentAudience(deps: SegmentDeps, accountId: string, req: AudienceQuery): Promise<SegmentAudiencePage> {
  const limit = audiencePageSize(req.pageSize);
  const topicId = optionalId(req.topicId, 'topicId');
  const after = optionalId(req.afterSubscriberId, 'afterSubscriberId');
  const narrowing: Filter[] = [await memberFilter(deps, accountId, req.segmentId)];
  if (topicId) narrowing.push({ topics: topicId });
  // accountId, subscriberStatus and the _id range at the top level: the (accountId, subscriberStatus,
  // _id) index answers the page as a range walk on MongoDB; the embedded store scans the partition.
  const filter: Filter = { accountId, subscriberStatus: 'ACTIVE', $and: narrowing, ...(after ? { _id: { $gt: after } } : {}) };
  // One more than the page: whether a member follows is known exactly, without a count.
  const docs = await repositoriesOf(deps, accountId).contacts.find(filter, { sort: { _id: 1 }, limit: limit + 1, projection: { _id: 1 } });
  const ids = docs.map((c) => c._id);
  return { subscriberIds: ids.slice(0, limit), lastPage: ids.length <= limit };
}
