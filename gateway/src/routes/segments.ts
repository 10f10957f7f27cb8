import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { ApiError, fromGrpcError } from '../errors';
import {
  expressionToProto,
  purchaseOrderToProto,
  purchaseSourceJson,
  segmentCountJson,
  segmentJson,
  segmentPreviewJson,
  segmentToProto,
} from '../mapping/segments';
import { listSubscribersToProto, pageJson } from '../mapping/subscribers';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// Segments and purchase sources (segment service): one operation per row of the API contract's table. `/segments/preview` (literal)
// comes before `/segments/:segmentId`.

/**
 * The service answers a SEGMENT operand naming an unknown segment with INVALID_ARGUMENT
 * `segment_not_found`; the catalogue gives each errorId one status, and `segment_not_found` is the
 * 404 of an unknown segment, so that answer is published as 404 too (like `tag_not_found` for an
 * unknown tag id in a subscriber body).
 */
async function segmentCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const api = fromGrpcError(err);
    if (api && api.errorId === 'segment_not_found' && api.status !== 404) throw new ApiError(404, api.errorId, api.message, api.details);
    throw api ?? err;
  }
}

export const segmentOperations: Operation[] = [
  operation('post', '/segments/preview', 'previewSegmentExpression', async ({ clients, accountId, body, call }) =>
    ok(
      segmentPreviewJson(
        (await segmentCall(() => clients.segment.previewExpression({ accountId, expression: expressionToProto(body.expression), topicId: body.topicId?.toLowerCase() }, call)))
          .preview,
      ),
    ),
  ),

  operation('get', '/segments', 'listSegments', async ({ clients, accountId, call }) =>
    ok({ items: (await segmentCall(() => clients.segment.listSegments({ accountId }, call))).items.map(segmentJson) }),
  ),

  operation('post', '/segments', 'createSegment', async ({ clients, accountId, body, call }) => {
    const segment = segmentJson((await segmentCall(() => clients.segment.createSegment(segmentToProto(accountId, body), call))).segment);
    return created(segment, `/segments/${segment.id}`);
  }),

  operation('get', '/segments/:segmentId', 'getSegment', async ({ clients, accountId, params, call }) =>
    ok(segmentJson((await segmentCall(() => clients.segment.getSegment({ accountId, segmentId: params.segmentId }, call))).segment)),
  ),

  operation('put', '/segments/:segmentId', 'updateSegment', async ({ clients, accountId, params, body, call }) =>
    ok(
      segmentJson(
        (await segmentCall(() => clients.segment.updateSegment({ ...segmentToProto(accountId, body), segmentId: params.segmentId }, call))).segment,
      ),
    ),
  ),

  operation('delete', '/segments/:segmentId', 'deleteSegment', async ({ clients, accountId, params, call }) => {
    await segmentCall(() => clients.segment.deleteSegment({ accountId, segmentId: params.segmentId }, call));
    return noContent();
  }),

  operation('get', '/segments/:segmentId/count', 'countSegment', async ({ clients, accountId, params, call }) =>
    ok(segmentCountJson((await segmentCall(() => clients.segment.countSegment({ accountId, segmentId: params.segmentId }, call))).count)),
  ),

  // The members of a saved segment: the subscriber list with segmentId (the subscriber service asks
  // the segment service for the page of ids and loads the overviews).
  operation('get', '/segments/:segmentId/subscribers', 'listSegmentSubscribers', async ({ clients, accountId, params, query, call }) =>
    ok(pageJson(await clients.subscriber.listSubscribers(listSubscribersToProto(accountId, { pageNumber: query.pageNumber, pageSize: query.pageSize, segmentId: params.segmentId }), call))),
  ),

  operation('get', '/segments/:segmentId/preview', 'previewSegment', async ({ clients, accountId, params, query, call }) =>
    ok(
      segmentPreviewJson(
        (await segmentCall(() => clients.segment.previewSegment({ accountId, segmentId: params.segmentId, topicId: query.topicId?.toLowerCase() }, call))).preview,
      ),
    ),
  ),

  // ---- purchase sources ----

  operation('get', '/purchase-sources', 'listPurchaseSources', async ({ clients, accountId, call }) =>
    ok({ items: (await segmentCall(() => clients.segment.listPurchaseSources({ accountId }, call))).items.map(purchaseSourceJson) }),
  ),

  operation('post', '/purchase-sources', 'createPurchaseSource', async ({ clients, accountId, body, call }) => {
    const source = purchaseSourceJson(
      (await segmentCall(() => clients.segment.createPurchaseSource({ accountId, name: body.name, timeZone: body.timeZone }, call))).source,
    );
    return created(source, `/purchase-sources/${source.id}`);
  }),

  operation('post', '/purchase-sources/:sourceId/orders', 'ingestPurchaseOrders', async ({ clients, accountId, params, body, call }) => {
    const res = await segmentCall(() => clients.segment.ingestOrders({ accountId, sourceId: params.sourceId, orders: body.orders.map(purchaseOrderToProto) }, call));
    return ok({ accepted: res.accepted, duplicates: res.duplicates });
  }),

  operation('post', '/purchase-sources/:sourceId/baseline', 'setPurchaseBaseline', async ({ clients, accountId, params, body, call }) =>
    ok(
      purchaseSourceJson(
        (
          await segmentCall(() =>
            clients.segment.setPurchaseBaseline({ accountId, sourceId: params.sourceId, capturedOrdersFromUtc: body.capturedOrdersFromUtc, complete: body.complete }, call),
          )
        ).source,
      ),
    ),
  ),
];

export const segmentRoutes = (clients: ServiceClients): Router => mount(segmentOperations, clients);
