// Use case DeliverMessages: a batch of `jobs.email.<accountId>` jobs -> at most one SMTP send of each
// stored message (docs/architecture.md "Mail": the message record is the truth). A batch costs two store
// transactions whatever its size: one claims it, one settles it.
//
// 1. The batch's messages, bodies and suppressions are read together. A message that is no longer
//    QUEUED or DEFERRED was dealt with: nothing is sent (a redelivered or duplicated job). One that
//    is DEFERRED and not due yet waits for its time. Two jobs of one message in a batch: the second
//    waits for the first's outcome.
// 2. A message whose address was suppressed since it was accepted becomes SUPPRESSED, unsent. The
//    account's send rate (domain/send-rate.ts) may delay a send, or send the job back for later.
// 3. One transaction records an attempt STARTED and a claim for every message to send
//    (store/messages.ts claimForSending), before anything is sent; the messages are then sent
//    concurrently (the worker bounds the sends in flight), and one transaction records every
//    outcome and releases the claims. A crash in between leaves the claims: the same job's
//    redelivery takes them over and sends again, so a crash costs at most one resend of the
//    messages that were on the wire; any other job for such a message waits for the outcome.
// 4. 250 -> SENT (and DELIVERED when the relay's acceptance confirms delivery) with email.sent /
//    email.delivered through the outbox in the settling transaction; 4xx or no answer -> DEFERRED
//    and retried per MAIL_RETRY_SCHEDULE_SECONDS, then FAILED; 5xx -> BOUNCED (hard) at once through
//    recordBounce (suppression, subscriber status). Once a message can no longer be sent its rendered
//    body is deleted.
import { groupBy } from '@mailer/kit';
import type { DomainMessage } from '@mailer/nats/facts';
import type { Collection, Store, Transaction } from '@mailer/store';
import type { MailTransport } from '../../clients/smtp-transport';
import { recordBounce, type BounceDeps } from '../../readers/app/bounces';
import type { EmailOutcome } from './email-outcomes';
import { failureOutcome, mayTakeOver, retryDelayMs, sentOutcome, type SendOutcome, type SmtpError } from '../domain/delivery';
import { domainOf, outgoingMail, SendPartsCache, type DkimKey } from '../domain/outgoing-mail';
import type { AccountSendRate } from '../domain/send-rate';
import type { DomainPolicy } from '../../templates/app/sending-domains';
import { emailFact } from '../events/email-facts';
import { messagesOf, type DeliveryAttempt, type EmailBodyDoc, type EmailMessageDoc, type MessageCollections, type MessageRepository, type MessageStatus } from '../store/messages';
import type { OutboxRepository } from '@mailer/nats';
import { suppressionsOf, type SuppressionDoc, type SuppressionListReason } from '../../readers/store/suppressions';

export interface DeliveryDeps {
  store: Store;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  /** Sends one mail; the worker passes a transport that bounds the sends in flight. */
  transport: Pick<MailTransport, 'send'>;
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
/** A job's result, or the error it met (retried by the worker). */
export type DeliveryJobResult = DeliveryResult | { error: unknown };

const SENDABLE: ReadonlySet<MessageStatus> = new Set(['QUEUED', 'DEFERRED']);
/** A send may wait this long for the account's rate inside the handler; longer waits go back to the queue. */
const MAX_INLINE_RATE_WAIT_MS = 1_000;
/** How soon a job for a message another delivery is sending looks again. */
const IN_FLIGHT_RETRY_MS = 5_000;
/** A job may come back this much before the due time of a deferred message (timers are not exact). */
const DUE_SLACK_MS = 1_000;
const IN_FLIGHT: DeliveryResult = { outcome: 'IN_FLIGHT', retryInMs: IN_FLIGHT_RETRY_MS };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What the readers of an audience send share in their mail, built with the send's first mail this process sends. */
const sendParts = new SendPartsCache();

/** One message of the batch on its way: what was read, then claimed, then sent. */
interface Delivery {
  job: DeliveryJob;
  repo: MessageRepository;
  message: EmailMessageDoc;
  seen: { status: MessageStatus; claimToken: string | null };
  suppressedFor?: SuppressionListReason;
  rateWaitMs: number;
  token: string;
  claimed?: EmailMessageDoc;
  outcome?: SendOutcome;
  /** The body is missing: record the attempt and give up (retrying would not bring it back). */
  giveUp?: boolean;
}

/** Delivers a batch of jobs; one result per job, in order. Throws when the store fails before anything was sent. */
export async function deliverMessages(deps: DeliveryDeps, jobs: readonly DeliveryJob[]): Promise<DeliveryJobResult[]> {
  const results: DeliveryJobResult[] = new Array(jobs.length);
  const batch = await readBatch(deps, jobs, results);
  if (batch.size === 0) return results;
  await claim(deps, batch, results);
  const claimed = [...batch].filter(([, d]) => d.claimed);
  if (claimed.length === 0) return results;
  await send(deps, claimed.map(([, d]) => d));
  await settle(deps, claimed, results);
  return results;
}

/** Reads the batch and decides which messages may be sent now; the others get their result. */
async function readBatch(deps: DeliveryDeps, jobs: readonly DeliveryJob[], results: DeliveryJobResult[]): Promise<Map<number, Delivery>> {
  const batch = new Map<number, Delivery>();
  const now = deps.now();
  await Promise.all([...groupBy(jobs.keys(), (i) => jobs[i].accountId)].map(async ([accountId, indexes]) => {
    const repo = messagesOf(deps.messages, accountId);
    const found = new Map((await repo.getMany([...new Set(indexes.map((i) => jobs[i].messageId))])).map((m) => [m._id, m]));
    const suppressed = await suppressionsOf(deps.suppressions, accountId).findMany([...new Set([...found.values()].map((m) => m.email))]);
    const taken = new Set<string>();
    for (const i of indexes) {
      const job = jobs[i];
      const message = found.get(job.messageId);
      const decided = decide(message, job, now);
      if (decided) {
        results[i] = decided;
        continue;
      }
      // Two jobs of one message in the batch: the second waits for the first's outcome.
      if (taken.has(job.messageId)) {
        results[i] = IN_FLIGHT;
        continue;
      }
      taken.add(job.messageId);
      const seen = { status: message!.status, claimToken: message!.sending?.token ?? null };
      const suppressedFor = suppressed.get(message!.email);
      let rateWaitMs = 0;
      if (!suppressedFor) {
        const rate = deps.sendRate.take(accountId, MAX_INLINE_RATE_WAIT_MS);
        if (!rate.reserved) {
          results[i] = { outcome: 'RATE_LIMITED', retryInMs: rate.waitMs };
          continue;
        }
        rateWaitMs = rate.waitMs;
      }
      batch.set(i, { job, repo, message: message!, seen, suppressedFor, rateWaitMs, token: deps.newId() });
    }
  }));
  return batch;
}

/** Why a job's message is not sent now, or null when it may be. */
function decide(message: EmailMessageDoc | undefined, job: DeliveryJob, now: Date): DeliveryResult | null {
  if (!message) return { outcome: 'UNKNOWN_MESSAGE' };
  if (!SENDABLE.has(message.status)) return { outcome: 'ALREADY_DONE' };
  const untilDue = message.status === 'DEFERRED' && message.nextAttemptAt ? new Date(message.nextAttemptAt).getTime() - now.getTime() : 0;
  if (untilDue > DUE_SLACK_MS) return { outcome: 'NOT_DUE', retryInMs: untilDue };
  if (message.sending && !mayTakeOver(message.sending, job.jobId, job.deliveryCount, now)) return IN_FLIGHT;
  return null;
}

/** One transaction: the suppressed messages become SUPPRESSED, the others are claimed for sending. */
async function claim(deps: DeliveryDeps, batch: Map<number, Delivery>, results: DeliveryJobResult[]): Promise<void> {
  const at = deps.now();
  await deps.store.transaction(async (tx) => {
    const suppressed: Delivery[] = [];
    for (const [i, d] of batch) {
      const id = d.message._id;
      if (d.suppressedFor) {
        const done = await d.repo.suppressBeforeSending(id, d.seen, d.suppressedFor, at, tx);
        results[i] = done ? { outcome: 'SUPPRESSED' } : IN_FLIGHT;
        if (done) suppressed.push(d);
        continue;
      }
      d.claimed = (await d.repo.claimForSending(id, d.seen, { token: d.token, job: d.job.jobId, deliveryCount: d.job.deliveryCount, at }, tx)) ?? undefined;
    }
    await dropBodies(suppressed, tx);
  });
  // Someone else settled or claimed a message between the read and the claim.
  const lost = [...batch].filter(([, d]) => !d.suppressedFor && !d.claimed);
  await Promise.all(lost.map(async ([i, d]) => {
    const now = await d.repo.get(d.message._id);
    results[i] = now && SENDABLE.has(now.status) ? IN_FLIGHT : { outcome: 'ALREADY_DONE' };
  }));
}

/** Drops the bodies of messages that can no longer be sent: one write per account. */
async function dropBodies(deliveries: Delivery[], tx: Transaction): Promise<void> {
  for (const [repo, ds] of groupBy(deliveries, (d) => d.repo)) await repo.dropBodies(ds.map((d) => d.message._id), tx);
}

/** Sends every claimed message (concurrently; the transport bounds how many are in flight). */
async function send(deps: DeliveryDeps, deliveries: Delivery[]): Promise<void> {
  const bodies = new Map<string, EmailBodyDoc>();
  await Promise.all([...groupBy(deliveries, (d) => d.repo)].map(async ([repo, ds]) => {
    for (const body of await repo.bodies(ds.map((d) => d.message._id))) bodies.set(body._id, body);
  }));
  // One key lookup per sending account and domain in the batch.
  const keys = new Map<string, Promise<DkimKey | null>>();
  const dkimKeyFor = (accountId: string, domain: string) => {
    const key = `${accountId}\0${domain}`;
    let found = keys.get(key);
    if (!found) keys.set(key, (found = deps.domains.dkimKeyFor(accountId, domain)));
    return found;
  };
  await Promise.all(deliveries.map(async (d) => {
    const claimed = d.claimed!;
    const body = bodies.get(claimed._id);
    if (!body) {
      // Cannot happen while the message is sendable (the body goes in the transaction that ends that).
      d.outcome = { kind: 'DEFERRED', smtpCode: null, response: 'the rendered body of the message is missing' };
      d.giveUp = true;
      return;
    }
    try {
      if (d.rateWaitMs > 0) await sleep(d.rateWaitMs);
      const parts = sendParts.for(claimed, await dkimKeyFor(d.job.accountId, domainOf(claimed.fromEmail)));
      const mail = outgoingMail(claimed, body, { returnPath: deps.links.returnPath(claimed._id), parts, now: deps.now() });
      d.outcome = sentOutcome((await deps.transport.send(mail)).response);
    } catch (err) {
      d.outcome = failureOutcome(err as SmtpError);
    }
  }));
}

/** One transaction: the outcome of every claim, its facts, the bodies no longer needed; then the bounces. */
async function settle(deps: DeliveryDeps, claimed: Array<[number, Delivery]>, results: DeliveryJobResult[]): Promise<void> {
  const at = deps.now();
  const settled = new Map<number, DeliveryResult | null>();
  await deps.store.transaction(async (tx) => {
    const facts: DomainMessage[] = [];
    const done: Delivery[] = [];
    for (const [i, d] of claimed) {
      const outcome = await settleOne(deps, d, at, tx, facts);
      settled.set(i, outcome?.result ?? null);
      if (outcome?.dropBody) done.push(d);
    }
    await deps.outbox.recordTogether(tx, facts);
    await dropBodies(done, tx);
  });
  deps.notifyOutbox?.();
  await Promise.all(claimed.map(async ([i, d]) => {
    const result = settled.get(i);
    if (!result) {
      // Our claim was declared stale and taken over while we sent: the other delivery owns the outcome.
      deps.log?.warn({ accountId: d.job.accountId, messageId: d.message._id, outcome: d.outcome!.kind }, 'delivery claim was taken over during the send; outcome not recorded');
      results[i] = { outcome: 'ALREADY_DONE' };
      return;
    }
    results[i] = result;
    if (result.outcome === 'BOUNCED') {
      try {
        await recordBounce(deps.bounces, { accountId: d.job.accountId, messageId: d.message._id, type: 'HARD', diagnosticCode: d.outcome!.response, at });
      } catch (error) {
        // The attempt is recorded and the message still sendable: the job's redelivery asks the relay again.
        results[i] = { error };
        return;
      }
    }
    for (const counted of OUTCOME_OF[result.outcome] ?? []) deps.bounces.emailOutcomes?.inc({ outcome: counted });
  }));
}

/** Writes the outcome of one claim inside the settling transaction; null when the claim was taken over. */
async function settleOne(deps: DeliveryDeps, d: Delivery, at: Date, tx: Transaction, facts: DomainMessage[]): Promise<{ result: DeliveryResult; dropBody: boolean } | null> {
  const { repo, token, outcome } = d;
  const claimed = d.claimed!;
  const attempts = [...claimed.attempts];
  const attempt = (result: DeliveryAttempt['outcome']): DeliveryAttempt => ({ at, outcome: result, smtpCode: outcome!.smtpCode, response: outcome!.response });
  if (outcome!.kind === 'SENT') {
    const delivered = deps.settings.MAIL_DELIVERY_CONFIRMATION === 'accept';
    attempts[attempts.length - 1] = attempt('SENT');
    const statuses: Array<{ status: MessageStatus; at: Date }> = [{ status: 'SENT', at }, ...(delivered ? [{ status: 'DELIVERED' as const, at }] : [])];
    if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses, set: { sentAt: at, deliveredAt: delivered ? at : null, nextAttemptAt: null } }, tx))) return null;
    facts.push(emailFact('email.sent', claimed, at, { smtpCode: outcome!.smtpCode, response: outcome!.response }));
    if (delivered) facts.push(emailFact('email.delivered', claimed, at, {}));
    return { result: { outcome: delivered ? 'DELIVERED' : 'SENT' }, dropBody: true };
  }
  if (outcome!.kind === 'BOUNCED') {
    // The attempt here; the bounce itself (message, suppression, subscriber status, email.bounced)
    // is recordBounce's, right after. A crash in between leaves the message sendable: the job's
    // redelivery asks the relay again and gets the same refusal.
    attempts[attempts.length - 1] = attempt('BOUNCED');
    if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses: [], set: { nextAttemptAt: null } }, tx))) return null;
    return { result: { outcome: 'BOUNCED' }, dropBody: false };
  }
  const deferredBefore = claimed.attempts.filter((a) => a.outcome === 'DEFERRED').length;
  const delayMs = d.giveUp ? null : retryDelayMs(deps.settings.MAIL_RETRY_SCHEDULE_SECONDS, deferredBefore);
  if (delayMs === null) {
    attempts[attempts.length - 1] = attempt('FAILED');
    if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses: [{ status: 'FAILED', at }], set: { nextAttemptAt: null } }, tx))) return null;
    return { result: { outcome: 'FAILED' }, dropBody: true };
  }
  attempts[attempts.length - 1] = attempt('DEFERRED');
  const statuses = claimed.status === 'DEFERRED' ? [] : [{ status: 'DEFERRED' as const, at }];
  if (!(await repo.settleAttempt(claimed._id, token, { attempts, statuses, set: { nextAttemptAt: new Date(at.getTime() + delayMs) } }, tx))) return null;
  return { result: { outcome: 'DEFERRED', retryInMs: delayMs }, dropBody: false };
}

/** The transitions a settled send recorded (a 5xx's BOUNCED is recordBounce's to count). */
const OUTCOME_OF: Partial<Record<DeliveryResult['outcome'], EmailOutcome[]>> = {
  SENT: ['sent'],
  DELIVERED: ['sent', 'delivered'],
  DEFERRED: ['deferred'],
  FAILED: ['failed'],
};
