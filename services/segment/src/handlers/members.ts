// SegmentService.ListSegmentMembers, ListSegmentAudience, EvaluateSegmentMember(s): gRPC <-> domain;
// the use cases are app/segment-members.ts, app/segment-audience.ts and app/evaluate-member.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import { statusCountsToProto, type segmentV1 } from '@mailer/proto';
import type { SegmentDeps } from '../app/deps';
import { evaluateSegmentMember, evaluateSegmentMembers } from '../app/evaluate-member';
import { listSegmentAudience } from '../app/segment-audience';
import { listSegmentMembers } from '../app/segment-members';
import { Memberships, SubscriberStatuses } from './mapping';

export function memberHandlers(deps: SegmentDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, 'listSegmentMembers' | 'listSegmentAudience' | 'evaluateSegmentMember' | 'evaluateSegmentMembers'> {
  return {
    async listSegmentMembers(req) {
      // Absent or UNSPECIFIED: any status; a value without a name goes on as its number, which the use case refuses (validation_failed).
      const status = !req.status ? undefined : (SubscriberStatuses.tryFromProto(req.status) ?? String(req.status));
      const { subscriberIds, total, statusCounts: counts } = await listSegmentMembers(deps, accountOf(req), { ...req, status });
      return {
        subscriberIds,
        total: String(total),
        statusCounts: statusCountsToProto(counts),
      };
    },
    async listSegmentAudience(req) {
      return listSegmentAudience(deps, accountOf(req), req);
    },
    async evaluateSegmentMember(req) {
      const { result, contactFound } = await evaluateSegmentMember(deps, accountOf(req), { segmentId: req.segmentId, subscriberId: req.subscriberId });
      return { result: Memberships.toProto(result), contactFound };
    },
    async evaluateSegmentMembers(req) {
      const results = await evaluateSegmentMembers(deps, accountOf(req), { segmentId: req.segmentId, subscriberIds: req.subscriberIds });
      return { results: results.map((r) => Memberships.toProto(r)) };
    },
  };
}
