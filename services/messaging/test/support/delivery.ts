// In-process harness of the delivery worker: a real nats-server, a real embedded store, the outbox
// relay, the email-jobs consumer with the production wiring (events/email-jobs.ts) and the capture
// relay as SMTP_URL. Messages come in through the accepting use case (app/accept-message.ts, what POST
// /email-messages runs), from the account's sender profile "The Shop" and its template
// `order-confirmation`, both created on the account's first message.
import crypto from 'node:crypto';
import { Counter, Registry } from '@mailer/kit';
import { connectNats, ensureStreams, publish, startOutboxRelay, type NatsConnection, type OutboxRelay } from '@mailer/nats';
import { job } from '@mailer/nats/facts';
import { startNatsServer, waitFor, waitForSettled, type CaptureRelay, type NatsServerHandle } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { acceptMessage, type AcceptInput } from '../../src/mail/app/accept-message';
import { bounceDeps } from '../../src/readers/app/bounces';
import { createEmailTemplate } from '../../src/templates/app/email-templates';
import { createSenderProfile } from '../../src/templates/app/sender-profiles';
import { domainPolicy } from '../../src/templates/app/sending-domains';
import { publicLinks } from '../../src/readers/app/public-links';
import { smtpTransport, type MailTransport } from '../../src/clients/smtp-transport';
import { loadMessagingConfig, type Config } from '../../src/config';
import { AccountSendRate } from '../../src/mail/domain/send-rate';
import { EMAIL_JOBS_DURABLE, startEmailJobs } from '../../src/mail/events/email-jobs';
import { messageCollections, messagesOf, type EmailBodyDoc, type EmailMessageDoc } from '../../src/mail/store/messages';
import { outboxRepository } from '@mailer/nats';
import { suppressionCollection, suppressionsOf, type SuppressionDoc } from '../../src/readers/store/suppressions';

/** What a test may set of a message it sends (the rest: a transactional order confirmation to ann@example.org). */
export type Send = Partial<Omit<AcceptInput, 'accountId'>>;

export interface DeliveryHarness {
  nats: NatsServerHandle;
  nc: NatsConnection;
  config: Config;
  links: ReturnType<typeof publicLinks>;
  store: TempStore;
  outcomes: Counter<string>;
  /** messaging_email_outcomes_total now, by outcome (every outcome present, 0 or more). */
  emailOutcomes(): Promise<Record<string, number>>;
  /** Accepts a message with the accepting use case (stored QUEUED with its body, its job through the outbox); its id. */
  send(accountId: string, message?: Send): Promise<string>;
  /** Another sender profile of the account; its id. */
  senderProfile(accountId: string, fromEmail: string): Promise<string>;
  /** Publishes a job for the message (again), with a fresh de-duplication id. */
  publishJob(accountId: string, messageId: string): Promise<void>;
  get(accountId: string, messageId: string): Promise<EmailMessageDoc | null>;
  body(accountId: string, messageId: string): Promise<EmailBodyDoc | null>;
  /** Polls the message until `until` holds for it. */
  waitForMessage(accountId: string, messageId: string, until: (m: EmailMessageDoc) => boolean, timeoutMs?: number): Promise<EmailMessageDoc>;
  suppression(accountId: string, email: string): Promise<SuppressionDoc | null>;
  /** Suppresses an address of the account, as a bounce report or the suppressions API does. */
  suppress(accountId: string, email: string, reason: SuppressionDoc['reason']): Promise<void>;
  /** Resolves once every email job was acknowledged or terminated (none pending or in flight) and the outbox is empty. */
  waitForJobsDone(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startDeliveryHarness(relay: CaptureRelay, env: Record<string, string> = {}): Promise<DeliveryHarness> {
  const nats = await startNatsServer();
  const nc = await connectNats({ url: nats.url, name: 'delivery-test', ...nats.auth });
  await ensureStreams(nc);
  const js = nc.jetstream();
  const store = await openTempStore('mailer-delivery');
  const config = loadMessagingConfig({
    NATS_URL: nats.url,
    SMTP_URL: relay.url,
    TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
    BOUNCE_DOMAIN: 'bounces.test.example',
    MAIL_RETRY_SCHEDULE_SECONDS: '1,1',
    ...env,
  });
  const links = publicLinks(config);
  const relayOut: OutboxRelay = startOutboxRelay({ store: store.store, js, retainPublishedMs: 0, intervalMs: 100 });
  const transport: MailTransport = smtpTransport(config);
  const registry = new Registry();
  const outcomes = new Counter({ name: 'messaging_delivery_outcomes_total', help: 'test', labelNames: ['outcome'], registers: [registry] });
  const collections = messageCollections(store.store);
  const consumer = startEmailJobs({
    nc,
    concurrency: config.MAIL_SEND_CONCURRENCY,
    logger: { warn: () => undefined, error: () => undefined } as never,
    outcomes,
    deps: {
      store: store.store,
      messages: collections,
      suppressions: suppressionCollection(store.store),
      outbox: outboxRepository(store.store),
      transport,
      links,
      domains: domainPolicy({ store: store.store, verification: config.MAIL_DOMAIN_VERIFICATION, keys: null, operatorKeys: config.DKIM_KEYS }),
      sendRate: new AccountSendRate(config.MAIL_ACCOUNT_RATE_PER_SECOND),
      settings: config,
      now: () => new Date(),
      newId: () => crypto.randomUUID(),
      notifyOutbox: relayOut.notify,
      bounces: bounceDeps({ store: store.store, notifyOutbox: relayOut.notify, now: () => new Date(), newId: () => crypto.randomUUID(), metrics: { registry } }),
    },
  });
  const publishJob = async (accountId: string, messageId: string) => {
    const j = job('email', { accountId, messageId });
    await publish(js, j.subject, j.payload, { msgID: crypto.randomUUID() });
  };
  const catalog = { store: store.store, now: () => new Date(), newId: () => crypto.randomUUID(), allowedFromDomains: [], domains: domainPolicy({ store: store.store, verification: 'off', keys: null, operatorKeys: {} }) };
  const accounts = new Set<string>();
  const acceptDeps = {
    store: store.store,
    messages: collections,
    suppressions: suppressionCollection(store.store),
    outbox: outboxRepository(store.store),
    // No address is a subscriber here: marketing mail names its subscriber itself, as automations do.
    recipients: { recipientByEmail: async () => null },
    links,
    domains: catalog.domains,
    now: () => new Date(),
    newId: () => crypto.randomUUID(),
    notify: relayOut.notify,
    awaitPublished: () => relayOut.awaitPublished(5_000),
  };
  return {
    nats,
    nc,
    config,
    links,
    store,
    outcomes,
    async emailOutcomes() {
      const metric = registry.getSingleMetric('messaging_email_outcomes_total') as Counter<string>;
      return Object.fromEntries((await metric.get()).values.map((v) => [String(v.labels.outcome), v.value]));
    },
    async send(accountId, message = {}) {
      if (!accounts.has(accountId)) {
        accounts.add(accountId);
        await createSenderProfile(catalog, accountId, { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop', replyTo: 'help@example.com' });
        await createEmailTemplate(catalog, accountId, {
          name: 'order-confirmation',
          subject: 'Your order {{ orderId }}',
          html: '<p>Hello <b>{{ subscriber.firstName | default: "Ann" }}</b>, thanks for order {{ orderId }}.</p>',
          tracking: { opens: false, clicks: false },
        });
      }
      const input: AcceptInput = { accountId, kind: 'TRANSACTIONAL', templateName: 'order-confirmation', email: 'ann@example.org', topicId: null, substitutionData: { orderId: '42' }, eventProperties: { orderId: '42' }, ...message };
      return (await acceptMessage(acceptDeps, input)).messageId;
    },
    async senderProfile(accountId, fromEmail) {
      return (await createSenderProfile(catalog, accountId, { name: fromEmail, fromEmail, fromName: 'Other' }))._id;
    },
    publishJob,
    suppression: (accountId, email) => suppressionsOf(suppressionCollection(store.store), accountId).find(email),
    async suppress(accountId, email, reason) {
      await suppressionsOf(suppressionCollection(store.store), accountId).add({ _id: crypto.randomUUID(), email, reason, createdAt: new Date(), messageId: null });
    },
    get: (accountId, messageId) => messagesOf(collections, accountId).get(messageId),
    body: (accountId, messageId) => messagesOf(collections, accountId).body(messageId),
    waitForMessage: (accountId, messageId, until, timeoutMs = 20_000) =>
      waitFor(`message ${messageId} in the awaited state`, async () => {
        const m = await messagesOf(collections, accountId).get(messageId);
        return m !== null && until(m) && m;
      }, timeoutMs),
    waitForJobsDone: (timeoutMs = 20_000) => waitForSettled(nc, { consumers: [EMAIL_JOBS_DURABLE], outboxes: [relayOut.pending], timeoutMs }),
    async stop() {
      await consumer.stop();
      transport.close();
      await relayOut.stop();
      await nc.drain();
      await store.close();
      await nats.stop();
    },
  };
}
