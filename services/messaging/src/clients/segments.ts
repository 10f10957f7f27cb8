// The segment service as the messaging service sees it: one gRPC channel (created once in server.ts).
// Saving an automation asks it whether the segment of an IF_IN_SEGMENT step exists; when it does not
// answer, PeerUnavailable (the request is answered 503). A run's IF_IN_SEGMENT step asks it for the
// subscriber's three-valued result; when it does not answer, the run's job is retried.
import { createClient, DomainError, GrpcStatus, PeerUnavailable, peerClient, protoEnum, TIME_LIMITS, type Logger } from '@mailer/kit';
import { segmentV1 } from '@mailer/proto';

export interface SegmentLookup {
  /** Whether the account has a segment with this id. */
  segmentExists(accountId: string, segmentId: string): Promise<boolean>;
}

/** A segment's three-valued result for one contact (the API contract "Segment semantics"). */
export type SegmentTruth = 'TRUE' | 'FALSE' | 'UNKNOWN';

/**
 * The segment's result for one subscriber (IF_IN_SEGMENT), from the segment service's
 * EvaluateSegmentMember: the same compiled evaluation as its counts, after its read-after-write wait,
 * so a field or tag an earlier step wrote is seen. `contactFound` false: the account has no such
 * subscriber any more (the result is then FALSE).
 */
export interface SegmentMembership {
  evaluateMember(accountId: string, segmentId: string, subscriberId: string): Promise<{ result: SegmentTruth; contactFound: boolean }>;
}

export interface SegmentClient extends SegmentLookup, SegmentMembership {
  close(): void;
}

/** A request waits at most this long for the answer (the gateway's deadlines allow for it). */
const LOOKUP_DEADLINE_MS = TIME_LIMITS.peerCall;
/**
 * An automation step (a job, no client waiting) gives the segment service room for its read-after-write
 * wait (SEGMENT_READ_WAIT_MS, 3 s by default) without holding one of the run slots long; past it the
 * job is retried with its backoff, never answered with a guess.
 */
const EVALUATE_DEADLINE_MS = 10_000;

const Memberships = protoEnum(segmentV1.SegmentMembership, 'SEGMENT_MEMBERSHIP_');

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
    async evaluateMember(accountId, segmentId, subscriberId) {
      const answer = await client.evaluateSegmentMember({ accountId, segmentId, subscriberId }, { deadlineMs: EVALUATE_DEADLINE_MS });
      const result = Memberships.tryFromProto(answer.result);
      // UNSPECIFIED or a value this build does not know: a peer newer or broken; retried, not guessed.
      if (result === undefined) throw new PeerUnavailable('segment', 'service_unavailable', 'The segment service answered no segment result; retry later.', { code: 'UNSPECIFIED', details: `result ${answer.result}` });
      return { result, contactFound: answer.contactFound };
    },
    close: () => client.close(),
  };
}
