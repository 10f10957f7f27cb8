import { contentSecurityPolicy, Counter } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, emailReportsV1, emailTemplatesV1, messagingV1, senderProfilesV1, suppressionsV1 } from '@mailer/proto';
import { bounceDeps } from './app/bounces';
import { publicLinks } from './app/public-links';
import { smtpTransport } from './clients/smtp-transport';
import { subscriberStatusClient } from './clients/subscriber-status';
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
import { suppressionHandlers } from './handlers/suppressions';
import { STYLESHEET } from './http/html';
import { publicPages } from './http/pages';
import { startBounceListener } from './inbound/bounce-listener';
import { automationRepository } from './store/automations';
import { messageCollections, messagesOf } from './store/messages';
import { outboxRepository } from './store/outbox';
import { suppressionCollection } from './store/suppressions';

/** Deadline of a render preview's subscriber lookup. */
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

  ctx.grpc.add(suppressionsV1.SuppressionServiceService, suppressionHandlers({ suppressions: suppressionCollection(ctx.store), now: ctx.now, newId: ctx.newId }));
  const messages = messageCollections(ctx.store);
  ctx.grpc.add(emailReportsV1.EmailReportServiceService, emailReportHandlers({ messagesOf: (accountId) => messagesOf(messages, accountId) }));

  // Reader pages (/t/* tracking, /u/* preferences and one-click unsubscribe), forwarded by the gateway.
  const topics = subscriberTopicsClient(config.SUBSCRIBER_GRPC_ADDR, ctx.logger);
  ctx.serveHttp({
    address: config.MESSAGING_HTTP_ADDR,
    contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [STYLESHEET] }),
    app: publicPages({
      store: ctx.store,
      messages,
      outbox: outboxRepository(ctx.store),
      links: publicLinks(config),
      subscribers: topics,
      machineWindowMs: config.MACHINE_EVENT_WINDOW_MS,
      notifyOutbox: ctx.notifyOutbox,
      now: ctx.now,
      logger: ctx.logger,
    }),
  });
  // Sender profiles and email templates (API.md); previews read subscribers from the subscriber service.
  const subscribers = subscriberDirectory(config.SUBSCRIBER_GRPC_ADDR, SUBSCRIBER_LOOKUP_DEADLINE_MS, ctx.logger);
  const catalog = { store: ctx.store, now: ctx.now, newId: ctx.newId, allowedFromDomains: config.MAIL_ALLOWED_FROM_DOMAINS, subscribers };
  ctx.grpc.add(senderProfilesV1.SenderProfileServiceService, senderProfileHandlers(catalog));
  ctx.grpc.add(emailTemplatesV1.EmailTemplateServiceService, emailTemplateHandlers(catalog));

  // Bounces and complaints: the inbound SMTP listener records their effects (app/bounces.ts); the
  // subscriber's status reaches the subscriber service through subscriber-status jobs, retried until
  // it answers.
  const statuses = subscriberStatusClient(config.SUBSCRIBER_GRPC_ADDR, 5_000, ctx.logger);
  const statusConsumer = startSubscriberStatusConsumer(ctx.nc, { messages, subscribers: statuses, logger: ctx.logger });
  const bounceListener = await startBounceListener(
    { bounces: bounceDeps(ctx), links: publicLinks(config), deliveryConfirmation: config.MAIL_DELIVERY_CONFIRMATION, logger: ctx.logger, registry: ctx.metrics.registry },
    config.BOUNCE_SMTP_HOST,
    config.BOUNCE_SMTP_PORT,
  );
  ctx.logger.info({ host: config.BOUNCE_SMTP_HOST, port: bounceListener.port }, 'bounce listener (SMTP) listening');

  // Delivery worker: JOBS jobs.email.> -> SMTP through one pooled transport (app/deliver-message.ts).
  const transport = smtpTransport(config);
  const deliveries = startEmailJobs({
    nc: ctx.nc,
    concurrency: config.MAIL_SEND_CONCURRENCY,
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
      links: publicLinks(config),
      sendRate: new AccountSendRate(config.MAIL_ACCOUNT_RATE_PER_SECOND),
      settings: config,
      now: ctx.now,
      newId: ctx.newId,
      notifyOutbox: ctx.notifyOutbox,
      log: ctx.logger,
      bounces: bounceDeps(ctx),
    },
  });
  return [
    // The delivery worker finishes (and settles) the sends in flight before the transport closes.
    () => deliveries.stop(),
    async () => transport.close(),
    () => bounceListener.stop(),
    () => statusConsumer.stop(),
    async () => statuses.close(),
    async () => topics.close(),
    async () => subscribers.close(),
  ];
}
