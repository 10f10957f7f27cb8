import { contentSecurityPolicy, Counter } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { referenceHandlers } from '@mailer/kit/references';
import { audienceSendsV1, automationsV1, broadcastsV1, commonV1, emailMessagesV1, emailReportsV1, emailTemplatesV1, eventsV1, messagingV1, referencesV1, senderProfilesV1, sendingDomainsV1, suppressionsV1 } from '@mailer/proto';
import { sealer } from '@mailer/tokens';
import { listReferences } from './usages/app/list-references';
import { bounceDeps } from './readers/app/bounces';
import { publicLinks } from './readers/app/public-links';
import { domainPolicy } from './templates/app/sending-domains';
import { dnsTxtLookup } from './clients/dns';
import { automationStepCounter } from './automations/app/run-automation';
import { audienceClient } from './clients/audience';
import { segmentClient } from './clients/segments';
import { smtpTransport } from './clients/smtp-transport';
import { consentSignupClient, formsClient } from './clients/forms';
import { rssNewslettersClient } from './clients/rss-newsletters';
import { subscriberClient } from './clients/subscribers';
import type { Config } from './config';
import { AccountSendRate } from './mail/domain/send-rate';
import { startAutomationRuns } from './automations/events/automation-runs';
import { startCustomEventsConsumer } from './automations/events/custom-events';
import { startRunScheduler } from './automations/events/run-scheduler';
import { broadcastFailureCounter, startBroadcastSends } from './audiences/events/broadcast-sends';
import { broadcastHandlers } from './audiences/handlers/broadcasts';
import { broadcastRepository } from './audiences/store/broadcasts';
import { recipientCollections } from './audiences/store/broadcast-recipients';
import { semaphore } from '@mailer/kit';
import { startEmailJobs } from './mail/events/email-jobs';
import { startSubscriberStatusConsumer } from './readers/events/subscriber-status';
import { audienceSendHandlers } from './audiences/handlers/audience-sends';
import { automationHandlers } from './automations/handlers/automations';
import { emailMessageHandlers } from './mail/handlers/email-messages';
import { emailReportHandlers } from './mail/handlers/email-reports';
import { emailTemplateHandlers } from './templates/handlers/email-templates';
import { eventHandlers } from './automations/handlers/events';
import { fieldUsageHandlers } from './usages/handlers/field-usage';
import { messagingHandlers } from './templates/handlers/messaging';
import { senderProfileHandlers } from './templates/handlers/sender-profiles';
import { sendingDomainHandlers } from './templates/handlers/sending-domains';
import { suppressionHandlers } from './readers/handlers/suppressions';
import { STYLESHEET } from './readers/http/html';
import { publicPages } from './readers/http/pages';
import { startBounceListener } from './readers/inbound/bounce-listener';
import { automationRepository } from './automations/store/automations';
import { eventCollection } from './automations/store/events';
import { messageCollections, messagesOf } from './mail/store/messages';
import { startReportRollUps } from './mail/app/roll-up-reports';
import { outboxRepository } from '@mailer/nats';
import { runCollection } from './automations/store/runs';
import { onceEntryCollection } from './automations/store/once-entries';
import { migrateRuns } from './automations/store/migrate-runs';
import { suppressionCollection } from './readers/store/suppressions';

/** Registers the messaging service's handlers (layout: handlers/ -> app/ -> domain/, store/; see docs/architecture.md). */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const { config } = ctx;
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the automations that set it.
  const automations = automationRepository(ctx.store);
  const broadcasts = broadcastRepository(ctx.store);
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ automations }));
  // The segment and subscriber services ask before a segment or topic is deleted: the automations and broadcasts naming it.
  ctx.grpc.add(referencesV1.ReferenceServiceService, referenceHandlers((accountId, kind, id) => listReferences({ automations, broadcasts }, accountId, kind, id)));

  const messages = messageCollections(ctx.store, { messageDays: config.MESSAGE_RETENTION_DAYS, reportDays: config.REPORT_RETENTION_DAYS });
  const suppressions = suppressionCollection(ctx.store);
  const outbox = outboxRepository(ctx.store);
  const links = publicLinks(config);
  // One channel to the subscriber service: recipients, render previews, reader topics, bounce effects.
  const subscribers = subscriberClient(config.SUBSCRIBER_GRPC_ADDR, ctx.logger);
  // The segment service: the segments automation steps name.
  const segments = segmentClient(config.SEGMENT_GRPC_ADDR, ctx.logger);

  ctx.grpc.add(suppressionsV1.SuppressionServiceService, suppressionHandlers({ suppressions, now: ctx.now, newId: ctx.newId }));
  ctx.grpc.add(emailReportsV1.EmailReportServiceService, emailReportHandlers({ messagesOf: (accountId) => messagesOf(messages, accountId) }));

  // Reader pages (/t/* tracking, /u/* preferences and one-click unsubscribe), forwarded by the gateway.
  ctx.serveHttp({
    address: config.MESSAGING_HTTP_ADDR,
    contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [STYLESHEET] }),
    app: publicPages({
      store: ctx.store,
      messages,
      outbox,
      links,
      subscribers,
      machineWindowMs: config.MACHINE_EVENT_WINDOW_MS,
      notifyOutbox: ctx.notifyOutbox,
      now: ctx.now,
      logger: ctx.logger,
    }),
  });
  // Sender profiles and email templates (the API contract); previews read subscribers from the subscriber service,
  // deletes ask the form service which forms name them (and the rss service which newsletters send
  // from a profile).
  const forms = formsClient(config.FORM_GRPC_ADDR, ctx.logger);
  const newsletters = rssNewslettersClient(config.RSS_GRPC_ADDR, ctx.logger);
  // Sending domains: the proof an account controls a domain, its own DKIM key for it, and the policy
  // (MAIL_DOMAIN_VERIFICATION) that sender profiles, sends, landing pages and signing go through.
  const keys = config.SECRET_SEALING_KEY ? sealer([config.SECRET_SEALING_KEY, ...config.SECRET_SEALING_KEY_PREVIOUS], 'dkim-private-key') : null;
  ctx.grpc.add(messagingV1.MessagingServiceService, messagingHandlers({ store: ctx.store, keys }));
  const domains = domainPolicy({ store: ctx.store, verification: config.MAIL_DOMAIN_VERIFICATION, keys, operatorKeys: config.DKIM_KEYS, logger: ctx.logger });
  if (config.MAIL_DOMAIN_VERIFICATION === 'off') {
    ctx.logger.warn('MAIL_DOMAIN_VERIFICATION=off: any account may send from (and serve landing pages on) any domain, signed with DKIM_KEYS; set it to required in production');
  } else if (Object.keys(config.DKIM_KEYS).length) {
    ctx.logger.warn('DKIM_KEYS is set but not used with MAIL_DOMAIN_VERIFICATION=required: mail is signed with the sending account\'s own key of a verified domain only');
  }
  ctx.grpc.add(
    sendingDomainsV1.SendingDomainServiceService,
    sendingDomainHandlers({ store: ctx.store, now: ctx.now, newId: ctx.newId, keys, dns: dnsTxtLookup(config.DNS_SERVERS), forms, policy: domains }),
  );
  const catalog = { store: ctx.store, now: ctx.now, newId: ctx.newId, allowedFromDomains: config.MAIL_ALLOWED_FROM_DOMAINS, domains, subscribers, forms, newsletters, broadcasts };
  ctx.grpc.add(senderProfilesV1.SenderProfileServiceService, senderProfileHandlers(catalog));
  ctx.grpc.add(emailTemplatesV1.EmailTemplateServiceService, emailTemplateHandlers(catalog));
  // Transactional email: accept (render, store, queue the delivery job) and read back.
  // What accepting a message needs; an API send waits for the job's publish (the 202 means queued).
  const accept = {
    store: ctx.store,
    messages,
    suppressions,
    outbox,
    recipients: subscribers,
    links,
    domains,
    now: ctx.now,
    newId: ctx.newId,
    notify: ctx.notifyOutbox,
    awaitPublished: async () => config.OUTBOX_PUBLISH_WAIT_MS === 0 || ctx.awaitPublished(config.OUTBOX_PUBLISH_WAIT_MS),
    logger: ctx.logger,
  };
  // The subscriber service's audiences (RSS issues, broadcasts) and the recipients of a batch by address.
  const audience = audienceClient(config.SUBSCRIBER_GRPC_ADDR, ctx.logger);
  ctx.grpc.add(emailMessagesV1.EmailMessageServiceService, emailMessageHandlers({ ...accept, batchRecipients: audience }));
  // Mail to an audience (RSS issues): one page of recipients per call, each queued at most once.
  ctx.grpc.add(audienceSendsV1.AudienceSendServiceService, audienceSendHandlers({ ...accept, audience }));
  // Broadcasts: CRUD and the send poller (due rows with a lease: sendAt, pages, windows, the A/B decision).
  let broadcastSends: ReturnType<typeof startBroadcastSends> | null = null;
  const broadcastDeps = {
    ...accept,
    broadcasts,
    recipients: recipientCollections(ctx.store),
    audience,
    catalog: { segmentExists: segments.segmentExists, topicIds: subscribers.topicIds, customFields: subscribers.customFields },
    recipientLookup: subscribers,
    notifyOutbox: ctx.notifyOutbox,
    settings: {
      pageSize: config.BROADCAST_SEND_PAGE_SIZE,
      leaseMs: config.BROADCAST_SEND_LEASE_SECONDS * 1000,
      retryMs: config.BROADCAST_SEND_RETRY_SECONDS * 1000,
      maxAttempts: config.BROADCAST_SEND_MAX_ATTEMPTS,
      minuteMs: config.BROADCAST_AB_MINUTE_MS,
    },
    wakeSend: (at: Date) => broadcastSends?.wake(at),
    broadcastFailed: broadcastFailureCounter(ctx.metrics.registry),
  };
  ctx.grpc.add(broadcastsV1.BroadcastServiceService, broadcastHandlers(broadcastDeps));
  broadcastSends = startBroadcastSends(broadcastDeps, ctx.logger);

  // Bounces and complaints: the inbound SMTP listener records their effects (app/bounces.ts); the
  // subscriber's status reaches the subscriber service through subscriber-status jobs, retried until
  // it answers.
  const statusConsumer = startSubscriberStatusConsumer(ctx.nc, { messages, subscribers, logger: ctx.logger });
  const bounceListener = await startBounceListener(
    {
      bounces: bounceDeps(ctx, messages),
      links,
      deliveryConfirmation: config.MAIL_DELIVERY_CONFIRMATION,
      logger: ctx.logger,
      registry: ctx.metrics.registry,
      bounceDomain: config.BOUNCE_DOMAIN,
      limits: { perAddress: config.BOUNCE_SMTP_MAX_CONNECTIONS_PER_ADDRESS, socketTimeoutMs: config.BOUNCE_SMTP_SOCKET_TIMEOUT_SECONDS * 1000 },
    },
    config.BOUNCE_SMTP_HOST,
    config.BOUNCE_SMTP_PORT,
  );
  ctx.logger.info({ host: config.BOUNCE_SMTP_HOST, port: bounceListener.port }, 'bounce listener (SMTP) listening');

  // Delivery worker: JOBS jobs.email.> -> SMTP through one pooled transport (app/deliver-message.ts).
  const transport = smtpTransport(config);
  if (config.MAIL_SEND_PAUSED) ctx.logger.warn('MAIL_SEND_PAUSED=true: no delivery worker in this replica; email jobs wait on JOBS');
  const deliveries = config.MAIL_SEND_PAUSED ? null : startEmailJobs({
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
      suppressions,
      outbox,
      transport,
      links,
      domains,
      sendRate: new AccountSendRate(config.MAIL_ACCOUNT_RATE_PER_SECOND),
      settings: config,
      now: ctx.now,
      newId: ctx.newId,
      notifyOutbox: ctx.notifyOutbox,
      log: ctx.logger,
      bounces: bounceDeps(ctx, messages),
    },
  });

  // Automations (the API contract): CRUD, every step's ids checked against the account when saved.
  const runs = runCollection(ctx.store, config.RUN_RETENTION_DAYS);
  const onceEntries = onceEntryCollection(ctx.store);
  // before events and runs are consumed: runs of an older build get their ONCE entries and finish times
  const migrated = await migrateRuns(ctx.store, runs, onceEntries, { days: config.RUN_RETENTION_DAYS, now: ctx.now() });
  if (migrated) ctx.logger.info({ runs: migrated.found }, 'automation runs: ONCE entries and finish times migrated');
  ctx.grpc.add(automationsV1.AutomationServiceService, automationHandlers({ store: ctx.store, automations, runs, catalog: subscribers, segments, now: ctx.now, newId: ctx.newId }));

  // Custom events: EVENTS events.> -> the event log (GET /events) and event.received facts, once per
  // eventId (app/record-event.ts); automations matched by their API-request trigger.
  const events = eventCollection(ctx.store, config.EVENT_RETENTION_DAYS);
  // Runs: automation-run jobs (started with their event) and the wait scheduler share one bound.
  const runLimit = semaphore(config.AUTOMATION_RUN_CONCURRENCY);
  let scheduler: ReturnType<typeof startRunScheduler> | null = null;
  const runDeps = {
    runs,
    events,
    automations,
    // A run's send is recorded in the run's own job: no reason to wait for the publish.
    accept: { ...accept, awaitPublished: async () => true },
    subscribers,
    segments,
    now: ctx.now,
    onWaiting: (dueAt: Date) => scheduler?.wake(dueAt),
    stepOutcomes: automationStepCounter(ctx.metrics.registry),
    logger: ctx.logger,
  };
  const runsConsumer = startAutomationRuns({
    nc: ctx.nc,
    deps: runDeps,
    limit: runLimit,
    batchSize: Math.ceil(config.AUTOMATION_RUN_CONCURRENCY / 2),
    logger: ctx.logger,
    outcomes: new Counter({
      name: 'messaging_automation_runs_total',
      help: 'automation-run jobs handled, by result (completed, waiting, exited, cancelled, not_due, already_ended, taken_over, unknown_run, malformed)',
      labelNames: ['outcome'],
      registers: [ctx.metrics.registry],
    }),
  });
  scheduler = startRunScheduler({ runs, deps: runDeps, limit: runLimit, now: ctx.now, logger: ctx.logger });
  ctx.grpc.add(eventsV1.EventServiceService, eventHandlers({ events, days: messages.days }));
  // An unknown address with consent signs up through the form service's double opt-in.
  const consentSignups = consentSignupClient(config.FORM_GRPC_ADDR, ctx.logger);
  const eventsConsumer = startCustomEventsConsumer({
    nc: ctx.nc,
    concurrency: config.EVENTS_CONSUMER_CONCURRENCY,
    logger: ctx.logger,
    outcomes: new Counter({
      name: 'messaging_custom_events_total',
      help: 'Custom events handled by the events consumer, by outcome (the recorded outcome, duplicate, malformed)',
      labelNames: ['outcome'],
      registers: [ctx.metrics.registry],
    }),
    deps: {
      store: ctx.store,
      events,
      automations,
      runs,
      onceEntries,
      newId: ctx.newId,
      outbox,
      subscribers,
      consentSignup: consentSignups.consentSignup,
      now: ctx.now,
      notifyOutbox: ctx.notifyOutbox,
    },
  });
  // the reports' daily aggregates, rolled up before message records and events are pruned, once the
  // events received while the service was stopped are recorded
  const rollUps = startReportRollUps({ store: ctx.store, messages, events, reportRetentionDays: config.REPORT_RETENTION_DAYS, now: ctx.now, logger: ctx.logger, backlog: () => eventsConsumer.lag() });
  return [
    // Events in work finish (recorded and acknowledged) before the subscriber client closes.
    () => eventsConsumer.stop(),
    // Runs in work finish their step before the peers' clients close.
    () => runsConsumer.stop(),
    async () => scheduler?.stop(),
    () => rollUps.stop(),
    async () => broadcastSends?.stop(),
    // The delivery worker finishes (and settles) the sends in flight before the transport closes.
    async () => deliveries?.stop(),
    async () => transport.close(),
    () => bounceListener.stop(),
    () => statusConsumer.stop(),
    async () => subscribers.close(),
    async () => audience.close(),
    async () => forms.close(),
    async () => newsletters.close(),
    async () => consentSignups.close(),
    async () => segments.close(),
  ];
}
