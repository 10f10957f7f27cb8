// SegmentService, purchase part: gRPC <-> domain; the use cases are app/purchases.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { segmentV1 } from '@mailer/proto';
import type { PurchaseDeps } from '../app/deps';
import { createPurchaseSource, ingestOrders, listPurchaseSources, setPurchaseBaseline } from '../app/purchases';
import type { PurchaseSourceDoc } from '../store/purchase-sources';

type Names = 'createPurchaseSource' | 'listPurchaseSources' | 'ingestOrders' | 'setPurchaseBaseline';

export function sourceToProto(s: PurchaseSourceDoc): segmentV1.PurchaseSource {
  return {
    id: s._id,
    name: s.name,
    timeZone: s.timeZone,
    capturedOrdersFromUtc: s.capturedOrdersFromUtc.toISOString(),
    capturedOrdersToUtc: s.capturedOrdersToUtc ? s.capturedOrdersToUtc.toISOString() : undefined,
    baselineOpen: s.baselineOpen,
    attributionStartedAtUtc: s.attributionStartedAtUtc.toISOString(),
  };
}

/** A purchase source as a preview's capture scope. */
export function captureScopeToProto(s: PurchaseSourceDoc): segmentV1.PurchaseCaptureScope {
  const { id, ...rest } = sourceToProto(s);
  return { sourceId: id, ...rest };
}

export function purchaseHandlers(deps: PurchaseDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, Names> {
  return {
    createPurchaseSource: async (req) => ({ source: sourceToProto(await createPurchaseSource(deps, accountOf(req), { name: req.name, timeZone: req.timeZone })) }),
    listPurchaseSources: async (req) => ({ items: (await listPurchaseSources(deps, accountOf(req))).map(sourceToProto) }),
    setPurchaseBaseline: async (req) => ({ source: sourceToProto(await setPurchaseBaseline(deps, accountOf(req), { sourceId: req.sourceId, capturedOrdersFromUtc: req.capturedOrdersFromUtc, complete: req.complete })) }),
    ingestOrders: async (req) => ingestOrders(deps, accountOf(req), { sourceId: req.sourceId, orders: req.orders }),
  };
}
