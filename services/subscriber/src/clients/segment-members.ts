// The segment service's members of a saved segment: SegmentService.ListSegmentMembers (the page of
// subscriber ids, the total and the status counts for ListSubscribers with a segment_id) and
// ListSegmentAudience (a send's recipients, ListAudience with a segment_id), EvaluateSegmentMembers
// (a broadcast's readers' segment results, their exclusion reasons). The segment
// service owns the contact projection and the expression compiler; this service loads the overviews.
import { createClient, DomainError, GrpcStatus, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { segmentV1, subscriberV1 } from '@mailer/proto';
import type { SubscriberStatus } from '../domain/subscriber';

const SubscriberStatuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');
const Memberships = protoEnum(segmentV1.SegmentMembership, 'SEGMENT_MEMBERSHIP_');

/** A segment's three-valued result for one contact; UNSPECIFIED (a peer that answered none) is read as UNKNOWN. */
export type SegmentTruth = 'TRUE' | 'FALSE' | 'UNKNOWN';

/** ListSegmentMembers' request with the status as the domain names it (absent: any status). */
export type SegmentMembersQuery = Omit<segmentV1.ListSegmentMembersRequest, 'status'> & { status?: SubscriberStatus };

export interface SegmentMembers {
  /**
   * One page of members. The segment service's own errors pass through with their errorId
   * (segment_not_found, segment_projection_lagging, validation_failed); no answer at all (down,
   * deadline) is UNAVAILABLE `segment_service_unavailable`.
   */
  list(req: SegmentMembersQuery): Promise<segmentV1.ListSegmentMembersResponse>;
  /** One page of the segment's ACTIVE members in id order after a cursor (ListAudience); errors as list's. */
  audience(req: segmentV1.ListSegmentAudienceRequest): Promise<segmentV1.ListSegmentAudienceResponse>;
  /** The segment's result for each subscriber, in request order (a broadcast's exclusion reasons); errors as list's. */
  evaluate(req: segmentV1.EvaluateSegmentMembersRequest): Promise<SegmentTruth[]>;
  close(): void;
}

export function segmentMembers(address: string, deadlineMs: number, logger?: Logger): SegmentMembers {
  const client = peerClient(createClient(segmentV1.SegmentServiceClient, address, deadlineMs), {
    service: 'segment',
    errorId: 'segment_service_unavailable',
    message: 'The segment service, which evaluates the segment, is unavailable; retry later.',
    logger,
  });
  return {
    list: (req) => client.listSegmentMembers({ ...req, status: req.status === undefined ? undefined : SubscriberStatuses.toProto(req.status) }),
    audience: (req) => client.listSegmentAudience(req),
    async evaluate(req) {
      const { results } = await client.evaluateSegmentMembers(req);
      if (results.length !== req.subscriberIds.length) throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', `the segment service answered ${results.length} results for ${req.subscriberIds.length} subscribers`);
      return results.map((r) => Memberships.tryFromProto(r) ?? 'UNKNOWN');
    },
    close: () => client.close(),
  };
}
