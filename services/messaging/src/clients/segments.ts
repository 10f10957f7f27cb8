// The segment service as the messaging service sees it: one gRPC channel (created once in server.ts).
// Saving an automation asks it whether the segment of an IF_IN_SEGMENT step exists; when it does not
// answer, PeerUnavailable (the request is answered 503).
import { createClient, DomainError, GrpcStatus, peerClient, type Logger } from '@mailer/kit';
import { segmentV1 } from '@mailer/proto';

export interface SegmentLookup {
  /** Whether the account has a segment with this id. */
  segmentExists(accountId: string, segmentId: string): Promise<boolean>;
}

/**
 * Whether the segment is TRUE for one subscriber (IF_IN_SEGMENT). The segment service lists a
 * segment's members (contacts for which it is TRUE, never UNKNOWN); the subscriber is looked for among
 * the members whose address starts with its address. FALSE and UNKNOWN both answer false: the segment
 * service has no call telling them apart for one contact.
 */
export interface SegmentMembership {
  isMember(accountId: string, segmentId: string, subscriberId: string, email: string): Promise<boolean>;
}

export interface SegmentClient extends SegmentLookup, SegmentMembership {
  close(): void;
}

/** A request waits at most this long for the answer, well inside the gateway's 5 s. */
const LOOKUP_DEADLINE_MS = 2_000;

export function segmentClient(address: string, logger?: Logger): SegmentClient {
  const client = peerClient(createClient(segmentV1.SegmentServiceClient, address), {
    service: 'segment',
    errorId: 'service_unavailable',
    message: 'The segment service is unavailable; retry later.',
    logger,
  });
  return {
    async segmentExists(accountId, segmentId) {
      try {
        const { segment } = await client.getSegment({ accountId, segmentId }, { deadlineMs: LOOKUP_DEADLINE_MS });
        return segment !== undefined;
      } catch (err) {
        if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return false;
        throw err;
      }
    },
    async isMember(accountId, segmentId, subscriberId, email) {
      for (let pageNumber = 1; ; pageNumber++) {
        const page = await client.listSegmentMembers({ accountId, segmentId, pageNumber, pageSize: 1000, search: email });
        if (page.subscriberIds.some((id) => id.toLowerCase() === subscriberId.toLowerCase())) return true;
        if (page.subscriberIds.length < 1000) return false;
      }
    },
    close: () => client.close(),
  };
}
