import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailReportsV1, messagingV1 } from '@mailer/proto';
import type { Config } from './config';
import { emailReportHandlers } from './handlers/email-reports';
import { fieldUsageHandlers } from './handlers/field-usage';
import { automationRepository } from './store/automations';
import { messageCollections, messagesOf } from './store/messages';

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<void> {
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations: automationRepository(ctx.store) }));
  const messages = messageCollections(ctx.store);
  ctx.grpc.add(emailReportsV1.EmailReportServiceService, emailReportHandlers({ messagesOf: (accountId) => messagesOf(messages, accountId) }));
}
