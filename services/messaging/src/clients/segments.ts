// The segment service as the messaging service sees it: one gRPC channel (created once in server.ts).
// Saving an automation asks it whether the segment of an IF_IN_SEGMENT step exists; when it does not
// answer, PeerUnavailable (the request is answered 503).
import { createClient, DomainError, GrpcStatus, peerClient, type Logger } from '@mailer/kit';
import { segmentV1 } from '@mailer/proto';

export interface SegmentLookup {
  /** Whether the account has a segment with this id. */
  segmentExists(accountId: string, segmentId: string): Promise<boolean>;
}

export interface SegmentClient extends SegmentLookup {
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
    close: () => client.close(),
  };
}
