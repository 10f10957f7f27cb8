// Use case DeliverMessage: one `jobs.email.<accountId>` job -> at most one SMTP send of the stored
// message (DESIGN.md "Mail": the message record is the truth).
//
// 1. A message that is no longer QUEUED or DEFERRED was dealt with: nothing is sent (a redelivered
//    or duplicated job). One that is DEFERRED and not due yet waits for its time.
//    A message whose address was suppressed since it was accepted becomes SUPPRESSED, unsent.
// 2. The account's send rate (domain/send-rate.ts) may delay the send; the job comes back later.
// 3. An attempt STARTED and a claim are recorded before sending (store/messages.ts claimForSending),
//    the outcome and the release of the claim after. A crash in between leaves the claim: the same
//    job's redelivery takes it over and sends again, so a crash costs at most one resend of the
//    messages that were on the wire; any other job for the message waits for the outcome.
// 4. 250 -> SENT (and DELIVERED when the relay's acceptance confirms delivery) with email.sent /
//    email.delivered through the outbox in the same transaction; 4xx or no answer -> DEFERRED and
//    retried per MAIL_RETRY_SCHEDULE_SECONDS, then FAILED; 5xx -> BOUNCED (hard) at once through
//    recordBounce (suppression, subscriber status). Once the message can no longer be sent its
//    rendered body is deleted.
import type { DomainMessage } from '@mailer/nats/facts';
import type { Collection, Store } from '@mailer/store';
import type { MailTransport } from '../clients/smtp-transport';
import { recordBounce, type BounceDeps } from './bounces';
import type { EmailOutcome } from './email-outcomes';
import { failureOutcome, mayTakeOver, retryDelayMs, sentOutcome, type SendOutcome, type SmtpError } from '../domain/delivery';
import { domainOf, outgoingMail } from '../domain/outgoing-mail';
import type { AccountSendRate } from '../domain/send-rate';
import type { DomainPolicy } from './sending-domains';
import { emailFact } from '../events/email-facts';
import { messagesOf, type DeliveryAttempt, type EmailMessageDoc, type MessageCollections, type MessageRepository, type MessageStatus } from '../store/messages';
import type { OutboxRepository } from '@mailer/nats';
import { suppressionsOf, type SuppressionDoc } from '../store/suppressions';

export interface DeliveryDeps {
  store: Store;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  transport: MailTransport;
  links: { returnPath(messageId: string): string };
  sendRate: AccountSendRate;
  settings: {
    MAIL_DELIVERY_CONFIRMATION: 'accept' | 'dsn';
    MAIL_RETRY_SCHEDULE_SECONDS: readonly number[];
  };
  /** The signing key of the sending account's From domain (never another account's). */
  domains: Pick<DomainPolicy, 'dkimKeyFor'>;
  now(): Date;
  newId(): string;
  /** Wakes the outbox relay after a commit that recorded facts. */
  notifyOutbox?(): void;
  log?: { warn(obj: object, msg: string): void };
  /** A 5xx answer is a hard bounce with all its effects (app/bounces.ts). */
  bounces: BounceDeps;
}

export interface DeliveryJob {
  accountId: string;
  messageId: string;
  /** The job's identity across its redeliveries (its stream sequence). */
  jobId: string;
  /** 1 on the job's first delivery. */
  deliveryCount: number;
}

export type DeliveryResult =
  | { outcome: 'SENT' | 'DELIVERED' | 'BOUNCED' | 'FAILED' | 'SUPPRESSED' | 'ALREADY_DONE' | 'UNKNOWN_MESSAGE' }
  | { outcome: 'DEFERRED' | 'NOT_DUE' | 'RATE_LIMITED' | 'IN_FLIGHT'; retryInMs: number };

const SENDABLE: ReadonlySet<MessageStatus> = new Set(['QUEUED', 'DEFERRED']);
/** A send may wait this long for the account's rate inside the handler; longer waits go back to the queue. */
const MAX_INLINE_RATE_WAIT_MS = 1_000;
/** How soon a job for a message another delivery is sending looks again. */
const IN_FLIGHT_RETRY_MS = 5_000;
/** A job may come back this much before the due time of a deferred message (timers are not exact). */
const DUE_SLACK_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function deliverMessage(deps: DeliveryDeps, job: DeliveryJob): Promise<DeliveryResult> {
  const repo = messagesOf(deps.messages, job.accountId);
  const message = await repo.get(job.messageId);
  if (!message) return { outcome: 'UNKNOWN_MESSAGE' };
  if (!SENDABLE.has(message.status)) return { outcome: 'ALREADY_DONE' };
  const untilDue = message.status === 'DEFERRED' && message.nextAttemptAt ? new Date(message.nextAttemptAt).getTime() - deps.now().getTime() : 0;
  if (untilDue > DUE_SLACK_MS) return { outcome: 'NOT_DUE', retryInMs: untilDue };
  if (message.sending && !mayTakeOver(message.sending, job.jobId, job.deliveryCount, deps.now())) return { outcome: 'IN_FLIGHT', retryInMs: IN_FLIGHT_RETRY_MS };

  const rate = deps.sendRate.take(job.accountId, MAX_INLINE_RATE_WAIT_MS);
  if (!rate.reserved) return { outcome: 'RATE_LIMITED', retryInMs: rate.waitMs };
  if (rate.waitMs > 0) await sleep(rate.waitMs);

  const seen = { status: message.status, claimToken: message.sending?.token ?? null };
  // Suppressed since it was accepted (a bounce or complaint of another mail, a manual entry): not sent.
  const suppression = await suppressionsOf(deps.suppressions, job.accountId).find(message.email);
  if (suppression) {
    const at = deps.now();
    const done = await deps.store.transaction(async (tx) => {
      if (!(await repo.suppressBeforeSending(job.messageId, seen, suppression.reason, at, tx))) return false;
      await repo.dropBody(job.messageId, tx);
      return true;
    });
    return done ? { outcome: 'SUPPRESSED' } : { outcome: 'IN_FLIGHT', retryInMs: IN_FLIGHT_RETRY_MS };
  }

  const token = deps.newId();
  const startedAt = deps.now();
  const claimed = await repo.claimForSending(job.messageId, seen, { token, job: job.jobId, deliveryCount: job.deliveryCount, at: startedAt });
  if (!claimed) {
    // Someone else settled or claimed it between the read and the claim.
    const now = await repo.get(job.messageId);
    return now && SENDABLE.has(now.status) ? { outcome: 'IN_FLIGHT', retryInMs: IN_FLIGHT_RETRY_MS } : { outcome: 'ALREADY_DONE' };
  }

  const body = await repo.body(job.messageId);
  let outcome: SendOutcome;
  if (!body) {
    // Cannot happen while the message is sendable (the body goes in the transaction that ends that);
    // if it did, retrying would not bring it back.
    outcome = { kind: 'DEFERRED', smtpCode: null, response: 'the rendered body of the message is missing' };
    return settle(deps, repo, claimed, token, outcome, true);
  }
  try {
    const dkim = await deps.domains.dkimKeyFor(job.accountId, domainOf(claimed.fromEmail));
    const mail = outgoingMail(claimed, body, { returnPath: deps.links.returnPath(claimed._id), dkim });
    outcome = sentOutcome((await deps.transport.send(mail)).response);
  } catch (err) {
    outcome = failureOutcome(err as SmtpError);
  }
  return settle(deps, repo, claimed, token, outcome, false);
}

/** Writes the outcome of our claim, with its facts, in one transaction. */
async function settle(deps: DeliveryDeps, repo: MessageRepository, claimed: EmailMessageDoc, token: string, outcome: SendOutcome, giveUp: boolean): Promise<DeliveryResult> {
  const at = deps.now();
  const attempts = [...claimed.attempts];
  const attempt = (result: DeliveryAttempt['outcome']): DeliveryAttempt => ({ at, outcome: result, smtpCode: outcome.smtpCode, response: outcome.response });
  let result: DeliveryResult;
  const settled = await deps.store.transaction(async (tx) => {
    if (outcome.kind === 'SENT') {
      const delivered = deps.settings.MAIL_DELIVERY_CONFIRMATION === 'accept';
      attempts[attempts.length - 1] = attempt('SENT');
      const statuses: Array<{ status: MessageStatus; at: Date }> = [{ status: 'SENT', at }, ...(delivered ? [{ status: 'DELIVERED' as const, at }] : [])];
      if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses, set: { sentAt: at, deliveredAt: delivered ? at : null, nextAttemptAt: null } }, tx))) return false;
      const facts: DomainMessage[] = [emailFact('email.sent', claimed, at, { smtpCode: outcome.smtpCode, response: outcome.response })];
      if (delivered) facts.push(emailFact('email.delivered', claimed, at, {}));
      await deps.outbox.record(tx, facts);
      await repo.dropBody(claimed._id, tx);
      result = { outcome: delivered ? 'DELIVERED' : 'SENT' };
      return true;
    }
    if (outcome.kind === 'BOUNCED') {
      // The attempt here; the bounce itself (message, suppression, subscriber status, email.bounced)
      // is recordBounce's, right after. A crash in between leaves the message sendable: the job's
      // redelivery asks the relay again and gets the same refusal.
      attempts[attempts.length - 1] = attempt('BOUNCED');
      if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses: [], set: { nextAttemptAt: null } }, tx))) return false;
      result = { outcome: 'BOUNCED' };
      return true;
    }
    const deferredBefore = claimed.attempts.filter((a) => a.outcome === 'DEFERRED').length;
    const delayMs = giveUp ? null : retryDelayMs(deps.settings.MAIL_RETRY_SCHEDULE_SECONDS, deferredBefore);
    if (delayMs === null) {
      attempts[attempts.length - 1] = attempt('FAILED');
      if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses: [{ status: 'FAILED', at }], set: { nextAttemptAt: null } }, tx))) return false;
      await repo.dropBody(claimed._id, tx);
      result = { outcome: 'FAILED' };
      return true;
    }
    attempts[attempts.length - 1] = attempt('DEFERRED');
    const statuses = claimed.status === 'DEFERRED' ? [] : [{ status: 'DEFERRED' as const, at }];
    if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses, set: { nextAttemptAt: new Date(at.getTime() + delayMs) } }, tx))) return false;
    result = { outcome: 'DEFERRED', retryInMs: delayMs };
    return true;
  });
  if (settled && outcome.kind === 'BOUNCED') {
    await recordBounce(deps.bounces, { accountId: claimed.accountId, messageId: claimed._id, type: 'HARD', diagnosticCode: outcome.response, at });
  }
  if (!settled) {
    // Our claim was declared stale and taken over while we sent: the other delivery owns the outcome.
    deps.log?.warn({ accountId: claimed.accountId, messageId: claimed._id, outcome: outcome.kind }, 'delivery claim was taken over during the send; outcome not recorded');
    return { outcome: 'ALREADY_DONE' };
  }
  deps.notifyOutbox?.();
  const counted = OUTCOME_OF[result!.outcome];
  if (counted) for (const outcome of counted) deps.bounces.emailOutcomes?.inc({ outcome });
  return result!;
}

/** The transitions a settled send recorded (a 5xx's BOUNCED is recordBounce's to count). */
const OUTCOME_OF: Partial<Record<DeliveryResult['outcome'], EmailOutcome[]>> = {
  SENT: ['sent'],
  DELIVERED: ['sent', 'delivered'],
  DEFERRED: ['deferred'],
  FAILED: ['failed'],
};
