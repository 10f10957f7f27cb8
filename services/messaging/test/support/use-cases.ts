// The messaging use cases wired on one store for in-process tests, as server.ts wires them: an account
// with a sender profile and a template, a message accepted (acceptMessage) and delivered
// (deliverMessages) to a real SMTP relay. No address is a subscriber here (tests that need one pass it,
// as automations do).
import crypto from 'node:crypto';
import type { Store } from '@mailer/store';
import { outboxRepository } from '@mailer/nats';
import { acceptMessage, type AcceptDeps, type AcceptInput } from '../../src/mail/app/accept-message';
import { bounceDeps } from '../../src/readers/app/bounces';
import { deliverMessages, type DeliveryDeps, type DeliveryJob, type DeliveryJobResult, type DeliveryResult } from '../../src/mail/app/deliver-message';
import { createEmailTemplate, type EmailTemplateRequest } from '../../src/templates/app/email-templates';
import type { PublicLinks } from '../../src/readers/app/public-links';
import { createSenderProfile } from '../../src/templates/app/sender-profiles';
import { domainPolicy } from '../../src/templates/app/sending-domains';
import type { MailTransport } from '../../src/clients/smtp-transport';
import { AccountSendRate } from '../../src/mail/domain/send-rate';
import { messageCollections } from '../../src/mail/store/messages';
import { suppressionCollection } from '../../src/readers/store/suppressions';

export interface UseCases {
  accept: AcceptDeps;
  delivery: DeliveryDeps;
  /** A new account with the sender profile "News" and `template` (name `welcome` unless given); its id. */
  account(template?: Partial<EmailTemplateRequest>): Promise<string>;
  /** A transactional message to ann@example.org from template `welcome`; its id. */
  send(accountId: string, over?: Partial<AcceptInput>): Promise<string>;
  /** One delivery of the message's job, alone in its batch (the error it met is thrown). */
  deliver(accountId: string, messageId: string, job?: Partial<DeliveryJob>): Promise<DeliveryResult>;
  /** One batch of jobs, as the worker hands them over; one result per job. */
  deliverBatch(jobs: Array<Pick<DeliveryJob, 'accountId' | 'messageId'> & Partial<DeliveryJob>>): Promise<DeliveryJobResult[]>;
}

export function useCases(opts: { store: Store; links: PublicLinks; transport: MailTransport; now?: () => Date; notify?: () => void; sendRate?: AccountSendRate; retrySchedule?: number[]; log?: DeliveryDeps['log'] }): UseCases {
  const { store } = opts;
  const now = opts.now ?? (() => new Date());
  const notify = opts.notify ?? (() => undefined);
  const domains = domainPolicy({ store, verification: 'off', keys: null, operatorKeys: {} });
  const common = { store, messages: messageCollections(store), suppressions: suppressionCollection(store), outbox: outboxRepository(store), links: opts.links, now, newId: crypto.randomUUID, domains };
  const accept: AcceptDeps = { ...common, recipients: { recipientByEmail: async () => null }, notify, awaitPublished: async () => true };
  const delivery: DeliveryDeps = {
    ...common,
    transport: opts.transport,
    sendRate: opts.sendRate ?? new AccountSendRate(1000),
    settings: { MAIL_DELIVERY_CONFIRMATION: 'accept', MAIL_RETRY_SCHEDULE_SECONDS: opts.retrySchedule ?? [1] },
    notifyOutbox: notify,
    log: opts.log,
    bounces: bounceDeps({ store, notifyOutbox: notify, now, newId: crypto.randomUUID }),
  };
  const catalog = { store, now, newId: crypto.randomUUID, allowedFromDomains: [], domains };
  return {
    accept,
    delivery,
    async account(template = {}) {
      const accountId = crypto.randomUUID();
      await createSenderProfile(catalog, accountId, { name: 'News', fromEmail: 'news@example.com', fromName: 'News' });
      await createEmailTemplate(catalog, accountId, { name: 'welcome', subject: 'Hello', html: '<p>Hello</p>', ...template });
      return accountId;
    },
    async send(accountId, over = {}) {
      return (await acceptMessage(accept, { accountId, kind: 'TRANSACTIONAL', templateName: 'welcome', email: 'ann@example.org', topicId: null, ...over })).messageId;
    },
    async deliver(accountId, messageId, job = {}) {
      const [result] = await deliverMessages(delivery, [{ accountId, messageId, jobId: 'seq:1', deliveryCount: 1, ...job }]);
      if ('error' in result) throw result.error;
      return result;
    },
    deliverBatch: (jobs) => deliverMessages(delivery, jobs.map((job, i) => ({ jobId: `seq:${i + 1}`, deliveryCount: 1, ...job }))),
  };
}
