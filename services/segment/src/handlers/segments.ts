// SegmentService, saved segments: gRPC <-> domain, one use case per RPC (app/segments.ts).
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { segmentV1 } from '@mailer/proto';
import type { SegmentDeps } from '../app/deps';
import { countSegment, createSegment, deleteSegment, getSegment, listSegments, previewExpression, previewSegment, updateSegment, type SegmentPreview } from '../app/segments';
import { captureScopeToProto } from './purchases';
import { SubscriberStatuses, expressionFromProto, segmentToProto } from './mapping';


type Names = 'createSegment' | 'getSegment' | 'listSegments' | 'updateSegment' | 'deleteSegment' | 'countSegment' | 'previewSegment' | 'previewExpression';

function previewToProto(p: SegmentPreview): segmentV1.SegmentPreview {
  return {
    matchingCount: String(p.matching),
    unknownCount: String(p.unknown),
    reachableCount: String(p.reachable),
    contacts: p.contacts.map((c) => ({ id: c.id, email: c.email, firstName: c.firstName ?? undefined, subscriberStatus: SubscriberStatuses.toProto(c.subscriberStatus as (typeof SubscriberStatuses.names)[number]) })),
    captureScopes: p.captureScopes.map(captureScopeToProto),
  };
}

export function segmentHandlers(deps: SegmentDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, Names> {
  return {
    createSegment: async (req) => ({ segment: segmentToProto(await createSegment(deps, accountOf(req), { name: req.name, expression: expressionFromProto(req.expression) })) }),
    getSegment: async (req) => ({ segment: segmentToProto(await getSegment(deps, accountOf(req), req.segmentId)) }),
    listSegments: async (req) => ({ items: (await listSegments(deps, accountOf(req))).map(segmentToProto) }),
    updateSegment: async (req) => ({ segment: segmentToProto(await updateSegment(deps, accountOf(req), req.segmentId, { name: req.name, expression: expressionFromProto(req.expression) })) }),
    deleteSegment: async (req) => {
      await deleteSegment(deps, accountOf(req), req.segmentId);
      return {};
    },
    countSegment: async (req) => ({ count: { subscriberCount: String(await countSegment(deps, accountOf(req), req.segmentId)) } }),
    previewSegment: async (req) => ({ preview: previewToProto(await previewSegment(deps, accountOf(req), req.segmentId, req.topicId)) }),
    previewExpression: async (req) => ({ preview: previewToProto(await previewExpression(deps, accountOf(req), { expression: expressionFromProto(req.expression), topicId: req.topicId })) }),
  };
}
