// SegmentService.ListSegmentMembers: gRPC <-> domain; the use case is app/segment-members.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { segmentV1 } from '@mailer/proto';
import type { SegmentDeps } from '../app/deps';
import { listSegmentMembers } from '../app/segment-members';


export function memberHandlers(deps: SegmentDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, 'listSegmentMembers'> {
  return {
    async listSegmentMembers(req) {
      const { subscriberIds, total, statusCounts: counts } = await listSegmentMembers(deps, accountOf(req), req);
      return {
        subscriberIds,
        total: String(total),
        statusCounts: {
          unconfirmed: String(counts.UNCONFIRMED),
          active: String(counts.ACTIVE),
          unsubscribed: String(counts.UNSUBSCRIBED),
          bounced: String(counts.BOUNCED),
          complained: String(counts.COMPLAINED),
          blocked: String(counts.BLOCKED),
        },
      };
    },
  };
}
