import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, rssV1 } from '@mailer/proto';
import type { Config } from './config';
import { fieldUsageHandlers } from './handlers/field-usage';
import { newsletterRepository } from './store/newsletters';

/** Registers the rss service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<void> {
  ctx.grpc.add(rssV1.RssServiceService, {
    describe: async () => ({ service: 'rss', protoPackage: rssV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the newsletters whose templates print it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ newsletters: newsletterRepository(ctx.store) }));
}
