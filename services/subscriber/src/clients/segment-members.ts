// The segment service's members of a saved segment (SegmentService.ListSegmentMembers): the page of
// subscriber ids, the total and the status counts for ListSubscribers with a segment_id. The segment
// service owns the contact projection and the expression compiler; this service loads the overviews.
import type { ServiceError } from '@grpc/grpc-js';
import { createClient, DomainError, fromServiceError, GrpcStatus } from '@mailer/kit';
import { segmentV1 } from '@mailer/proto';

export interface SegmentMembers {
  /**
   * One page of members. The segment service's own errors pass through with their errorId
   * (segment_not_found, segment_projection_lagging, validation_failed); no answer at all (down,
   * deadline) is UNAVAILABLE `segment_service_unavailable`.
   */
  list(req: segmentV1.ListSegmentMembersRequest): Promise<segmentV1.ListSegmentMembersResponse>;
  close(): void;
}

export function segmentMembers(address: string, deadlineMs: number): SegmentMembers {
  const client = createClient(segmentV1.SegmentServiceClient, address, deadlineMs);
  return {
    async list(req) {
      try {
        return await client.listSegmentMembers(req);
      } catch (err) {
        const e = err as ServiceError;
        const domain = fromServiceError(e);
        if (domain) throw domain;
        // The text reaches clients (503 texts of services pass through the gateway): the status name only, no addresses.
        const code = typeof e.code === 'number' ? (GrpcStatus[e.code] ?? String(e.code)) : 'no answer';
        throw new DomainError(GrpcStatus.UNAVAILABLE, 'segment_service_unavailable', `the segment service, which evaluates the segment, did not answer (${code}); retry later`);
      }
    },
    close: () => client.close(),
  };
}
