import { contentSecurityPolicy } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailReportsV1, messagingV1 } from '@mailer/proto';
import { publicLinks } from './app/public-links';
import { subscriberTopicsClient } from './clients/subscriber-topics';
import type { Config } from './config';
import { emailReportHandlers } from './handlers/email-reports';
import { fieldUsageHandlers } from './handlers/field-usage';
import { STYLESHEET } from './http/html';
import { publicPages } from './http/pages';
import { automationRepository } from './store/automations';
import { messageCollections, messagesOf } from './store/messages';
import { outboxRepository } from './store/outbox';

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see DESIGN.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  ctx.grpc.add(messagingV1.MessagingServiceService, {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations: automationRepository(ctx.store) }));

  const messages = messageCollections(ctx.store);
  ctx.grpc.add(emailReportsV1.EmailReportServiceService, emailReportHandlers({ messagesOf: (accountId) => messagesOf(messages, accountId) }));

  // Reader pages (/t/* tracking, /u/* preferences and one-click unsubscribe), forwarded by the gateway.
  const subscribers = subscriberTopicsClient(ctx.config.SUBSCRIBER_GRPC_ADDR, ctx.logger);
  ctx.serveHttp({
    address: ctx.config.MESSAGING_HTTP_ADDR,
    contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [STYLESHEET] }),
    app: publicPages({
      store: ctx.store,
      messages,
      outbox: outboxRepository(ctx.store),
      links: publicLinks(ctx.config),
      subscribers,
      machineWindowMs: ctx.config.MACHINE_EVENT_WINDOW_MS,
      notifyOutbox: ctx.notifyOutbox,
      now: ctx.now,
      logger: ctx.logger,
    }),
  });
  return [async () => subscribers.close()];
}
