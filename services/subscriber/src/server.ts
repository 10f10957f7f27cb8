import type { ServiceContext } from '@mailer/kit/service';
import { subscriberV1 } from '@mailer/proto';
import type { Config } from './config';
import { subscriberHandlers } from './handlers/subscribers';
import { subscriberRepository } from './store/subscribers';

/** Registers the subscriber service's handlers on its gRPC server. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  const repo = subscriberRepository(ctx.store);
  ctx.grpc.add(subscriberV1.SubscriberServiceService, subscriberHandlers(repo, ctx.notifyOutbox));
}
