import { callLogger } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { audienceV1, signupV1, subscriberReportsV1, subscriberV1 } from '@mailer/proto';
import { referenceCheck } from '@mailer/kit/references';
import { fieldUsageSources } from './clients/field-usage';
import { segmentMembers } from './clients/segment-members';
import type { Config } from './config';
import { audienceHandlers } from './handlers/audience';
import { bulkTaggingHandlers } from './handlers/bulk-tagging';
import { deliveryStatusHandlers } from './handlers/delivery-status';
import { fieldHandlers } from './handlers/fields';
import { subscriberDataHandlers } from './handlers/subscriber-data';
import { tagHandlers } from './handlers/tags';
import { topicHandlers } from './handlers/topics';
import type { Deps } from './app/deps';
import { signupHandlers } from './handlers/signup';
import { subscriberReportHandlers } from './handlers/subscriber-reports';
import { subscriberHandlers } from './handlers/subscribers';
import { catalogRepository } from './store/catalog';
import { migrateTimes } from './store/migrate-times';
import { outboxRepository } from '@mailer/nats';
import { subscriberRepository } from './store/subscribers';

/** Builds the use cases' dependencies (app/deps.ts) and registers every RPC's handler (handlers/, one file per resource) on the gRPC server. */
export async function setup(service: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const { config } = service;
  // before any handler is registered (the gRPC server listens after setup): old string times become Dates
  await migrateTimes(service.store, service.logger);
  const usage = fieldUsageSources(
    { segment: config.SEGMENT_GRPC_ADDR, form: config.FORM_GRPC_ADDR, messaging: config.MESSAGING_GRPC_ADDR, rss: config.RSS_GRPC_ADDR },
    config.FIELD_USAGE_DEADLINE_MS,
    service.logger,
  );
  const members = segmentMembers(config.SEGMENT_GRPC_ADDR, config.SEGMENT_DEADLINE_MS, service.logger);
  // RSS newsletters and automation steps send to topics: a topic they name is not deleted.
  const references = referenceCheck({ rss: config.RSS_GRPC_ADDR, messaging: config.MESSAGING_GRPC_ADDR }, service.logger);
  const deps: Deps = {
    store: service.store,
    subscribers: subscriberRepository(service.store),
    catalog: catalogRepository(service.store),
    outbox: outboxRepository(service.store),
    usage,
    segmentMembers: members,
    references,
    notify: service.notifyOutbox,
    awaitPublished: async () => {
      if (config.OUTBOX_PUBLISH_WAIT_MS === 0) return;
      const published = await service.awaitPublished(config.OUTBOX_PUBLISH_WAIT_MS);
      if (!published) callLogger(service.logger).warn({ waitMs: config.OUTBOX_PUBLISH_WAIT_MS }, 'events not published in time; answering anyway (read-after-write not guaranteed for this write)');
    },
    maxPendingEvents: config.OUTBOX_MAX_PENDING,
    now: () => service.now().toISOString(),
    newId: service.newId,
  };
  service.grpc.add(subscriberV1.SubscriberServiceService, {
    ...subscriberHandlers(deps),
    ...subscriberDataHandlers(deps),
    ...bulkTaggingHandlers(deps),
    ...deliveryStatusHandlers(deps),
    ...fieldHandlers(deps), ...tagHandlers(deps), ...topicHandlers(deps),
  });
  service.grpc.add(signupV1.SignupServiceService, signupHandlers(deps));
  service.grpc.add(audienceV1.AudienceServiceService, audienceHandlers(deps));
  service.grpc.add(subscriberReportsV1.SubscriberReportServiceService, subscriberReportHandlers(deps));
  return [async () => usage.close(), async () => members.close(), async () => references.close()];
}
