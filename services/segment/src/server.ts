import type { ServiceRuntime } from '@mailer/kit/service';
import { callLogger, Counter, DomainError, GrpcStatus } from '@mailer/kit';
import { commonV1, segmentV1 } from '@mailer/proto';
import type { Config } from './config';
import { startProjection, type ProjectionHandle } from './events/projection';
import { ContactProjection } from './store/contacts';
import { segmentsCollection } from './store/segments';
import { subscriberCatalog } from './clients/catalog';
import { referenceCheck } from '@mailer/kit/references';
import { segmentHandlers } from './handlers/segments';
import { purchaseHandlers } from './handlers/purchases';
import { memberHandlers } from './handlers/members';
import { fieldUsageHandlers } from './handlers/field-usage';
import { purchaseCollections } from './store/purchase-sources';

/** Registers the segment service's handlers and starts the contact projection (stopped on SIGTERM). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const contactProjection = new ContactProjection(ctx.store);
  const catalog = subscriberCatalog(ctx.config.SUBSCRIBER_GRPC_ADDR, ctx.config.SUBSCRIBER_DEADLINE_MS, ctx.logger);
  const purchases = purchaseCollections(ctx.store);
  let projection: ProjectionHandle | undefined;
  const lagging = (message: string) => new DomainError(GrpcStatus.UNAVAILABLE, 'segment_projection_lagging', message);
  /**
   * Read-after-write across services: the subscriber service answers a write once its events are on
   * DOMAIN, so a count or preview waits until the projection has applied the stream up to its last
   * sequence as read when the request arrived. Past SEGMENT_READ_WAIT_MS it answers UNAVAILABLE
   * rather than stale data, so a result never silently misses an acknowledged write.
   */
  const awaitProjection = async (): Promise<void> => {
    if (!projection) throw lagging('the contact projection is not running yet; retry shortly');
    const waitMs = ctx.config.SEGMENT_READ_WAIT_MS;
    let tail: number;
    try {
      tail = await ctx.natsGuard(() => projection!.streamTail());
    } catch (err) {
      callLogger(ctx.logger).warn({ err }, 'cannot read the DOMAIN stream position');
      throw lagging('the position of the domain event stream cannot be read (NATS unreachable); retry shortly');
    }
    if (!(await projection.waitForSequence(tail, waitMs))) {
      callLogger(ctx.logger).warn({ tail, applied: projection.watermark.value, waitMs }, 'contact projection lagging');
      throw lagging(`the contact projection has not caught up with recent writes within ${waitMs} ms; retry shortly`);
    }
  };
  const segments = segmentsCollection(ctx.store);
  const clock = { now: ctx.now, newId: ctx.newId };
  // RSS newsletters and automation steps send to segments: a segment they name is not deleted.
  const references = referenceCheck({ rss: ctx.config.RSS_GRPC_ADDR, messaging: ctx.config.MESSAGING_GRPC_ADDR }, ctx.logger);
  const segmentDeps = { segments, contacts: contactProjection.contacts, catalog, purchases, awaitProjection, references, ...clock };
  ctx.grpc.add(segmentV1.SegmentServiceService, {
    describe: async () => ({ service: 'segment', protoPackage: segmentV1.protobufPackage }),
    ...segmentHandlers(segmentDeps),
    ...memberHandlers(segmentDeps),
    ...purchaseHandlers({ purchases, projection: contactProjection, ...clock }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the saved segments with conditions on it (app/field-usages.ts).
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ segments }));

  const applied = new Counter({
    name: 'segment_projection_events_total',
    help: 'DOMAIN events handled by the contact projection, by type and outcome (applied, stale, ignored, malformed, error)',
    labelNames: ['type', 'outcome'],
    registers: [ctx.metrics.registry],
  });
  projection = startProjection({
    nc: ctx.nc,
    projection: contactProjection,
    durable: ctx.config.SEGMENT_PROJECTION_DURABLE,
    concurrency: ctx.config.SEGMENT_PROJECTION_CONCURRENCY,
    logger: ctx.logger,
    counter: applied,
    registry: ctx.metrics.registry,
  });
  return [
    () => projection!.stop(),
    async () => catalog.close(),
    async () => references.close(),
  ];
}
