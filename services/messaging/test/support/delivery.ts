// In-process harness of the delivery worker: a real nats-server, a real embedded store, the outbox
// relay, the email-jobs consumer with the production wiring (events/email-jobs.ts) and the capture
// relay as SMTP_URL. Until POST /email-messages exists, the test stores messages in the harness's
// own store and publishes their jobs, as the accepting use case will.
import crypto from 'node:crypto';
import { Counter, Registry } from '@mailer/kit';
import { connectNats, ensureStreams, publish, startOutboxRelay, type NatsConnection, type OutboxRelay } from '@mailer/nats';
import { job } from '@mailer/nats/facts';
import { startNatsServer, type CaptureRelay, type NatsServerHandle } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { bounceDeps } from '../../src/app/bounces';
import { domainPolicy } from '../../src/app/sending-domains';
import { publicLinks } from '../../src/app/public-links';
import { smtpTransport, type MailTransport } from '../../src/clients/smtp-transport';
import { loadMessagingConfig, type Config } from '../../src/config';
import { AccountSendRate } from '../../src/domain/send-rate';
import { EMAIL_JOBS_DURABLE, startEmailJobs } from '../../src/events/email-jobs';
import { messageCollections, messagesOf, type EmailBodyDoc, type EmailMessageDoc, noEngagementYet } from '../../src/store/messages';
import { outboxRepository } from '@mailer/nats';
import { suppressionCollection, suppressionsOf, type SuppressionDoc } from '../../src/store/suppressions';

export type NewMessage = Omit<EmailMessageDoc, 'accountId'>;

/** A QUEUED transactional message as the accepting use case stores it. */
export function queuedMessage(overrides: Partial<NewMessage> = {}): NewMessage {
  const now = new Date();
  return {
    _id: crypto.randomUUID(),
    kind: 'TRANSACTIONAL',
    templateName: 'order-confirmation',
    email: 'ann@example.org',
    subscriberId: null,
    topicId: null,
    senderProfileId: crypto.randomUUID(),
    fromEmail: 'shop@example.com',
    fromName: 'The Shop',
    replyTo: 'help@example.com',
    subject: 'Your order 42',
    links: [],
    tracking: { opens: false, clicks: false },
    status: 'QUEUED',
    suppressionReason: null,
    history: [{ status: 'QUEUED', at: now }],
    attempts: [],
    nextAttemptAt: null,
    createdAt: now,
    sentAt: null,
    deliveredAt: null,
    bouncedAt: null,
    complainedAt: null,
    ...noEngagementYet(),
    eventProperties: { orderId: '42' },
    ...overrides,
  };
}

export const bodyOf = (overrides: Partial<Omit<EmailBodyDoc, '_id' | 'accountId'>> = {}): Omit<EmailBodyDoc, '_id' | 'accountId'> => ({
  html: '<p>Hello <b>Ann</b>, thanks for order 42.</p>',
  text: 'Hello Ann, thanks for order 42.',
  headers: {},
  ...overrides,
});

export interface DeliveryHarness {
  nats: NatsServerHandle;
  nc: NatsConnection;
  config: Config;
  links: ReturnType<typeof publicLinks>;
  store: TempStore;
  outcomes: Counter<string>;
  /** messaging_email_outcomes_total now, by outcome (every outcome present, 0 or more). */
  emailOutcomes(): Promise<Record<string, number>>;
  /** Stores the message (QUEUED, with its body) and publishes its job. */
  enqueue(accountId: string, message: NewMessage, body?: Omit<EmailBodyDoc, '_id' | 'accountId'>): Promise<void>;
  /** Publishes a job for the message (again), with a fresh de-duplication id. */
  publishJob(accountId: string, messageId: string): Promise<void>;
  get(accountId: string, messageId: string): Promise<EmailMessageDoc | null>;
  body(accountId: string, messageId: string): Promise<EmailBodyDoc | null>;
  /** Polls the message until `until` holds for it. */
  waitForMessage(accountId: string, messageId: string, until: (m: EmailMessageDoc) => boolean, timeoutMs?: number): Promise<EmailMessageDoc>;
  suppression(accountId: string, email: string): Promise<SuppressionDoc | null>;
  /** Suppresses an address of the account, as a bounce report or the suppressions API does. */
  suppress(accountId: string, email: string, reason: SuppressionDoc['reason']): Promise<void>;
  /** Resolves once every email job was acknowledged or terminated (none pending or in flight). */
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
  const poll = async <T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let last = await read();
    while (!ok(last)) {
      if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 50));
      last = await read();
    }
    return last;
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
    async enqueue(accountId, message, body = bodyOf()) {
      await messagesOf(collections, accountId).insert(message, body);
      await publishJob(accountId, message._id);
    },
    publishJob,
    suppression: (accountId, email) => suppressionsOf(suppressionCollection(store.store), accountId).find(email),
    async suppress(accountId, email, reason) {
      await suppressionsOf(suppressionCollection(store.store), accountId).add({ _id: crypto.randomUUID(), email, reason, createdAt: new Date(), messageId: null });
    },
    get: (accountId, messageId) => messagesOf(collections, accountId).get(messageId),
    body: (accountId, messageId) => messagesOf(collections, accountId).body(messageId),
    waitForMessage: (accountId, messageId, until, timeoutMs = 20_000) =>
      poll(`message ${messageId} state`, () => messagesOf(collections, accountId).get(messageId), (m) => m !== null && until(m), timeoutMs) as Promise<EmailMessageDoc>,
    async waitForJobsDone(timeoutMs = 20_000) {
      const jsm = await nc.jetstreamManager();
      const left = async () => {
        const info = await jsm.consumers.info('JOBS', EMAIL_JOBS_DURABLE);
        return info.num_pending + info.num_ack_pending;
      };
      await poll('email jobs done', left, (n) => n === 0, timeoutMs);
    },
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
