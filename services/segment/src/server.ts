import type { ServiceContext } from '@mailer/kit/service';
import { Counter } from '@mailer/kit';
import { commonV1, segmentV1 } from '@mailer/proto';
import type { Config } from './config';
import { startProjection } from './events/projection';
import { ContactProjection } from './store/contacts';
import { segmentsCollection } from './store/segments';
import { subscriberCatalog } from './clients/catalog';
import { segmentHandlers } from './handlers/segments';
import { purchaseHandlers } from './handlers/purchases';
import { purchaseCollections } from './store/purchase-sources';

/** Registers the segment service's handlers and starts the contact projection (stopped on SIGTERM). */
export async function setup(ctx: ServiceContext<Config>): Promise<Array<() => Promise<unknown>>> {
  const contactProjection = new ContactProjection(ctx.store);
  const catalog = subscriberCatalog(ctx.config.SUBSCRIBER_GRPC_ADDR, ctx.config.SUBSCRIBER_DEADLINE_MS);
  const purchases = purchaseCollections(ctx.store);
  ctx.grpc.add(segmentV1.SegmentServiceService, {
    describe: async () => ({ service: 'segment', protoPackage: segmentV1.protobufPackage }),
    ...segmentHandlers({ segments: segmentsCollection(ctx.store), contacts: contactProjection.contacts, catalog, purchaseSources: purchases.sources }),
    ...purchaseHandlers({ purchases, projection: contactProjection }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted. This service's own usages (its artifacts referencing fields) are reported
  // here once they exist; until then it answers, truthfully, that it uses none.
  ctx.grpc.add(commonV1.FieldUsageServiceService, {
    listFieldUsages: async () => ({ usages: [] }),
  });

  const applied = new Counter({
    name: 'segment_projection_events_total',
    help: 'DOMAIN events handled by the contact projection, by type and outcome (applied, stale, ignored, malformed, error)',
    labelNames: ['type', 'outcome'],
    registers: [ctx.metrics.registry],
  });
  const projection = startProjection({
    nc: ctx.nc,
    projection: contactProjection,
    durable: ctx.config.SEGMENT_PROJECTION_DURABLE,
    concurrency: ctx.config.SEGMENT_PROJECTION_CONCURRENCY,
    logger: ctx.logger,
    counter: applied,
  });
  return [
    () => projection.stop(),
    async () => catalog.close(),
  ];
}
