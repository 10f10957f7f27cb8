import type { ServiceContext } from '@mailer/kit/service';
import { rssV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the rss service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(rssV1.RssServiceService, {
    describe: async () => ({ service: 'rss', protoPackage: rssV1.protobufPackage }),
  });
}
