// The segment service's members of a saved segment: SegmentService.ListSegmentMembers (the page of
// subscriber ids, the total and the status counts for ListSubscribers with a segment_id) and
// ListSegmentAudience (a send's recipients, ListAudience with a segment_id). The segment
// service owns the contact projection and the expression compiler; this service loads the overviews.
import { createClient, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { segmentV1, subscriberV1 } from '@mailer/proto';
import type { SubscriberStatus } from '../domain/subscriber';

const SubscriberStatuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');

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
    close: () => client.close(),
  };
}
