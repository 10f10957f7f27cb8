import { contentSecurityPolicy, Counter, createClient, peerClient } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailReportsV1, emailTemplatesV1, messagingV1, senderProfilesV1, subscriberV1 } from '@mailer/proto';
import { bounceDeps } from './app/bounces';
import { publicLinks } from './app/public-links';
import { smtpTransport } from './clients/smtp-transport';
import { subscriberTopicsClient } from './clients/subscriber-topics';
import { subscriberDirectory } from './clients/subscribers';
import type { Config } from './config';
import { AccountSendRate } from './domain/send-rate';
import { startEmailJobs } from './events/email-jobs';
import { startSubscriberStatusConsumer } from './events/subscriber-status';
import { emailReportHandlers } from './handlers/email-reports';
import { emailTemplateHandlers } from './handlers/email-templates';
import { fieldUsageHandlers } from './handlers/field-usage';
import { senderProfileHandlers } from './handlers/sender-profiles';
import { STYLESHEET } from './http/html';
import { publicPages } from './http/pages';
import { automationRepository } from './store/automations';
import { messageCollections, messagesOf } from './store/messages';
import { outboxRepository } from './store/outbox';
import { suppressionCollection } from './store/suppressions';

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

  const messages = messageCollections(ctx.store);
  ctx.grpc.add(emailReportsV1.EmailReportServiceService, emailReportHandlers({ messagesOf: (accountId) => messagesOf(messages, accountId) }));

  // Reader pages (/t/* tracking, /u/* preferences and one-click unsubscribe), forwarded by the gateway.
  const topics = subscriberTopicsClient(ctx.config.SUBSCRIBER_GRPC_ADDR, ctx.logger);
  ctx.serveHttp({
    address: ctx.config.MESSAGING_HTTP_ADDR,
    contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [STYLESHEET] }),
    app: publicPages({
      store: ctx.store,
      messages,
      outbox: outboxRepository(ctx.store),
      links: publicLinks(ctx.config),
      subscribers: topics,
      machineWindowMs: ctx.config.MACHINE_EVENT_WINDOW_MS,
      notifyOutbox: ctx.notifyOutbox,
      now: ctx.now,
      logger: ctx.logger,
    }),
  });
  // Sender profiles and email templates (API.md); previews read subscribers from the subscriber service.
  const subscribers = subscriberDirectory(ctx.config.SUBSCRIBER_GRPC_ADDR, SUBSCRIBER_LOOKUP_DEADLINE_MS, ctx.logger);
  const catalog = { store: ctx.store, now: ctx.now, newId: ctx.newId, allowedFromDomains: ctx.config.MAIL_ALLOWED_FROM_DOMAINS, subscribers };
  ctx.grpc.add(senderProfilesV1.SenderProfileServiceService, senderProfileHandlers(catalog));
  ctx.grpc.add(emailTemplatesV1.EmailTemplateServiceService, emailTemplateHandlers(catalog));

  // The subscriber service owns subscriber statuses: bounce and complaint effects reach it through
  // subscriber-status jobs (app/bounces.ts), retried until it answers.
  const statusPeer = peerClient(createClient(subscriberV1.SubscriberServiceClient, ctx.config.SUBSCRIBER_GRPC_ADDR, 5_000), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger: ctx.logger,
  });
  const statusConsumer = startSubscriberStatusConsumer(ctx.nc, { messages, subscribers: statusPeer, logger: ctx.logger });

  // Delivery worker: JOBS jobs.email.> -> SMTP through one pooled transport (app/deliver-message.ts).
  const transport = smtpTransport(ctx.config);
  const deliveries = startEmailJobs({
    nc: ctx.nc,
    concurrency: ctx.config.MAIL_SEND_CONCURRENCY,
    logger: ctx.logger,
    outcomes: new Counter({
      name: 'messaging_delivery_outcomes_total',
      help: 'Email jobs handled by the delivery worker, by outcome (delivered, sent, deferred, bounced, failed, suppressed, already_done, not_due, rate_limited, in_flight, unknown_message, malformed)',
      labelNames: ['outcome'],
      registers: [ctx.metrics.registry],
    }),
    deps: {
      store: ctx.store,
      messages,
      suppressions: suppressionCollection(ctx.store),
      outbox: outboxRepository(ctx.store),
      transport,
      links: publicLinks(ctx.config),
      sendRate: new AccountSendRate(ctx.config.MAIL_ACCOUNT_RATE_PER_SECOND),
      settings: ctx.config,
      now: ctx.now,
      newId: ctx.newId,
      notifyOutbox: ctx.notifyOutbox,
      log: ctx.logger,
      bounces: bounceDeps(ctx),
    },
  });
  // Shutdown: the consumers finish (and settle) their jobs before the transport and the clients close.
  return [
    () => deliveries.stop(),
    async () => transport.close(),
    () => statusConsumer.stop(),
    async () => statusPeer.close(),
    async () => topics.close(),
    async () => subscribers.close(),
  ];
}
