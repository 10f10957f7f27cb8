import { callLogger } from '@mailer/kit';
import type { ServiceContext } from '@mailer/kit/service';
import { subscriberV1 } from '@mailer/proto';
import { fieldUsageSources } from './clients/field-usage';
import { segmentMembers } from './clients/segment-members';
import type { Config } from './config';
import { catalogHandlers } from './handlers/catalog';
import type { Deps } from './handlers/context';
import { subscriberHandlers } from './handlers/subscribers';
import { catalogRepository } from './store/catalog';
import { subscriberRepository } from './store/subscribers';

/** Registers the subscriber service's handlers on its gRPC server. */
export async function setup(ctx: ServiceContext<Config>): Promise<Array<() => Promise<unknown>>> {
  const { config } = ctx;
  const usage = fieldUsageSources(
    { segment: config.SEGMENT_GRPC_ADDR, form: config.FORM_GRPC_ADDR, messaging: config.MESSAGING_GRPC_ADDR, rss: config.RSS_GRPC_ADDR },
    config.FIELD_USAGE_DEADLINE_MS,
    ctx.logger,
  );
  const members = segmentMembers(config.SEGMENT_GRPC_ADDR, config.SEGMENT_DEADLINE_MS, ctx.logger);
  const deps: Deps = {
    store: ctx.store,
    subscribers: subscriberRepository(ctx.store),
    catalog: catalogRepository(ctx.store),
    usage,
    segmentMembers: members,
    notify: ctx.notifyOutbox,
    awaitPublished: async () => {
      if (config.OUTBOX_PUBLISH_WAIT_MS === 0) return;
      const published = await ctx.awaitPublished(config.OUTBOX_PUBLISH_WAIT_MS);
      if (!published) callLogger(ctx.logger).warn({ waitMs: config.OUTBOX_PUBLISH_WAIT_MS }, 'events not published in time; answering anyway (read-after-write not guaranteed for this write)');
    },
    maxPendingEvents: config.OUTBOX_MAX_PENDING,
  };
  ctx.grpc.add(subscriberV1.SubscriberServiceService, { ...subscriberHandlers(deps), ...catalogHandlers(deps) });
  return [async () => usage.close(), async () => members.close()];
}
