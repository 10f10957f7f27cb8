import { createClient, peerClient } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, messagingV1, subscriberV1 } from '@mailer/proto';
import type { Config } from './config';
import { bounceDeps } from './app/bounces';
import { publicLinks } from './app/public-links';
import { startSubscriberStatusConsumer } from './events/subscriber-status';
import { startBounceListener } from './inbound/bounce-listener';
import { fieldUsageHandlers } from './handlers/field-usage';
import { automationRepository } from './store/automations';
import { messageCollections } from './store/messages';

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations: automationRepository(ctx.store) }));

  // The subscriber service owns subscriber statuses: bounce and complaint effects reach it through
  // subscriber-status jobs (app/bounces.ts), retried until it answers.
  const subscribers = peerClient(createClient(subscriberV1.SubscriberServiceClient, ctx.config.SUBSCRIBER_GRPC_ADDR, 5_000), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger: ctx.logger,
  });
  const statusConsumer = startSubscriberStatusConsumer(ctx.nc, { messages: messageCollections(ctx.store), subscribers, logger: ctx.logger });
  const { config } = ctx;
  const bounceListener = await startBounceListener(
    { bounces: bounceDeps(ctx), links: publicLinks(config), deliveryConfirmation: config.MAIL_DELIVERY_CONFIRMATION, logger: ctx.logger },
    config.BOUNCE_SMTP_HOST,
    config.BOUNCE_SMTP_PORT,
  );
  ctx.logger.info({ host: config.BOUNCE_SMTP_HOST, port: bounceListener.port }, 'bounce listener (SMTP) listening');
  return [() => bounceListener.stop(), () => statusConsumer.stop(), async () => subscribers.close()];
}
