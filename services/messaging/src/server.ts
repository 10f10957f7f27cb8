import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailTemplatesV1, messagingV1, senderProfilesV1 } from '@mailer/proto';
import type { Config } from './config';
import { fieldUsageHandlers } from './handlers/field-usage';
import { automationRepository } from './store/automations';
import { subscriberDirectory } from './clients/subscribers';
import { senderProfileHandlers } from './handlers/sender-profiles';
import { emailTemplateHandlers } from './handlers/email-templates';

/** Deadline of a render preview's subscriber lookup. */
const SUBSCRIBER_LOOKUP_DEADLINE_MS = 2_000;

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations: automationRepository(ctx.store) }));
  // Sender profiles and email templates (API.md); previews read subscribers from the subscriber service.
  const subscribers = subscriberDirectory(ctx.config.SUBSCRIBER_GRPC_ADDR, SUBSCRIBER_LOOKUP_DEADLINE_MS, ctx.logger);
  const catalog = { store: ctx.store, now: ctx.now, newId: ctx.newId, allowedFromDomains: ctx.config.MAIL_ALLOWED_FROM_DOMAINS, subscribers };
  ctx.grpc.add(senderProfilesV1.SenderProfileServiceService, senderProfileHandlers(catalog));
  ctx.grpc.add(emailTemplatesV1.EmailTemplateServiceService, emailTemplateHandlers(catalog));
  return [async () => subscribers.close()];
}
