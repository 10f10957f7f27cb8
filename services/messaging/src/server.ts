import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailMessagesV1, emailTemplatesV1, messagingV1, senderProfilesV1 } from '@mailer/proto';
import { publicLinks } from './app/public-links';
import { subscriberDirectory } from './clients/subscribers';
import type { Config } from './config';
import { emailMessageHandlers } from './handlers/email-messages';
import { emailTemplateHandlers } from './handlers/email-templates';
import { fieldUsageHandlers } from './handlers/field-usage';
import { senderProfileHandlers } from './handlers/sender-profiles';
import { automationRepository } from './store/automations';
import { messageCollections } from './store/messages';
import { suppressionCollection } from './store/suppressions';

/** Deadline of a subscriber lookup (render previews, recipients of sends), below the gateway's 5 s. */
const SUBSCRIBER_LOOKUP_DEADLINE_MS = 2_000;

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const { config } = ctx;
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations: automationRepository(ctx.store) }));
  // Sender profiles and email templates (API.md); previews read subscribers from the subscriber service.
  const subscribers = subscriberDirectory(config.SUBSCRIBER_GRPC_ADDR, SUBSCRIBER_LOOKUP_DEADLINE_MS, ctx.logger);
  const catalog = { store: ctx.store, now: ctx.now, newId: ctx.newId, allowedFromDomains: config.MAIL_ALLOWED_FROM_DOMAINS, subscribers };
  ctx.grpc.add(senderProfilesV1.SenderProfileServiceService, senderProfileHandlers(catalog));
  ctx.grpc.add(emailTemplatesV1.EmailTemplateServiceService, emailTemplateHandlers(catalog));
  // Transactional email: accept (render, store, queue the delivery job) and read back.
  ctx.grpc.add(emailMessagesV1.EmailMessageServiceService, emailMessageHandlers({
    store: ctx.store,
    messages: messageCollections(ctx.store),
    suppressions: suppressionCollection(ctx.store),
    recipients: subscribers,
    links: publicLinks(config),
    now: ctx.now,
    newId: ctx.newId,
    notify: ctx.notifyOutbox,
    awaitPublished: async () => config.OUTBOX_PUBLISH_WAIT_MS === 0 || ctx.awaitPublished(config.OUTBOX_PUBLISH_WAIT_MS),
    logger: ctx.logger,
  }));
  return [async () => subscribers.close()];
}
