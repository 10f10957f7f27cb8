// What happens after a mail bounces or is reported as spam (the API contract "Delivery facts, tracking,
// bounces, suppressions, unsubscribe"): the message record, the suppression list, the email.bounced /
// email.complained fact and the subscriber's status. Called by the inbound bounce listener (DSN and
// ARF reports) and by the delivery worker (a 5xx answer is a hard bounce at once).
//
// The policy (which effects) is domain/bounce-policy.ts; this file applies it in one transaction.
// The subscriber's status belongs to the subscriber service: instead of calling it here (it may be
// down, and a call cannot join our transaction), the effect is recorded as a `subscriber-status` job
// in the outbox, in the same transaction; events/subscriber-status.ts carries it out over gRPC and
// JetStream retries it until the subscriber service answers. So a committed bounce never loses it.
//
// Idempotent: the message transition is guarded (a message bounces once, a complaint is recorded
// once), and when it changes nothing no effect, fact or job is recorded again.
import { atomically, ConcurrentChange, type Clock, type IdSource, type Registry } from '@mailer/kit';
import { job, type DomainMessage } from '@mailer/nats/facts';
import type { Collection, Store, Transaction } from '@mailer/store';
import { decideBounceEffects, SOFT_BOUNCE_WINDOW_MS, type BounceEffect } from '../domain/bounce-policy';
import type { BounceReport } from '../domain/bounce-report';
import { emailFact } from '../../mail/events/email-facts';
import { emailOutcomeCounter, type EmailOutcome, type EmailOutcomeCounter } from '../../mail/app/email-outcomes';
import { messageCollections, messagesOf, type EmailMessageDoc, type MessageCollections } from '../../mail/store/messages';
import { outboxRepository, type OutboxRepository } from '@mailer/nats';
import { suppressionCollection, suppressionsOf, type SuppressionDoc, type SuppressionListReason } from '../store/suppressions';

export interface BounceDeps extends Clock, IdSource {
  store: Store;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  /** Wakes the outbox relay after a write that recorded facts or jobs. */
  notifyOutbox(): void;
  /** Counts the transitions recorded (the delivery worker's too). Absent (unit tests): not counted. */
  emailOutcomes?: EmailOutcomeCounter;
}

/** The dependencies from the service runtime (server.ts, with its retention settings) or a test's store. */
export function bounceDeps(ctx: { store: Store; notifyOutbox(): void; metrics?: { registry: Registry } } & Clock & IdSource, messages = messageCollections(ctx.store)): BounceDeps {
  return {
    store: ctx.store,
    messages,
    suppressions: suppressionCollection(ctx.store),
    outbox: outboxRepository(ctx.store),
    notifyOutbox: ctx.notifyOutbox,
    now: ctx.now,
    newId: ctx.newId,
    emailOutcomes: ctx.metrics && emailOutcomeCounter(ctx.metrics.registry),
  };
}

export interface BounceInput {
  accountId: string;
  messageId: string;
  type: 'HARD' | 'SOFT';
  diagnosticCode: string | null;
  at: Date;
}

export interface ComplaintInput {
  accountId: string;
  messageId: string;
  at: Date;
}

/**
 * `recorded`: the report changed the message and its effects were recorded; `duplicate`: the same
 * report again (nothing changed); `message_not_found`: no such message in the account.
 */
export interface ReportOutcome {
  outcome: 'recorded' | 'duplicate' | 'message_not_found';
  /** The suppression this report added (null when none was added: none due, or already suppressed). */
  suppressed: SuppressionListReason | null;
}

const notFound: ReportOutcome = { outcome: 'message_not_found', suppressed: null };
const duplicate: ReportOutcome = { outcome: 'duplicate', suppressed: null };
const recorded = (suppressed: SuppressionListReason | null): ReportOutcome => ({ outcome: 'recorded', suppressed });

/** Hard bounce: message BOUNCED, HARD_BOUNCE suppression, subscriber BOUNCED. Soft: message BOUNCED (soft), SOFT_BOUNCES suppression at the third in 7 days. */
export async function recordBounce(deps: BounceDeps, input: BounceInput): Promise<ReportOutcome> {
  const { accountId, messageId, type, diagnosticCode, at } = input;
  const messages = messagesOf(deps.messages, accountId);
  const result = await atomically(deps.store, async (tx) => {
    const message = await messages.get(messageId);
    if (!message) return notFound;
    const softBounceTimes = type === 'SOFT' ? await messages.softBouncesSince(message.email, new Date(at.getTime() - SOFT_BOUNCE_WINDOW_MS), messageId) : [];
    const report: BounceReport = {
      kind: 'bounce',
      originalEnvelopeId: null,
      recipients: [{ finalRecipient: message.email, action: 'failed', status: null, type, diagnosticCode }],
    };
    const effects = decideBounceEffects(report, policyView(message), { softBounceTimes, now: at });
    if (!(await messages.markBounced(messageId, { type, diagnosticCode }, at, tx))) return duplicate;
    return applyEffects(deps, tx, message, effects, at, emailFact('email.bounced', message, at, { bounceType: type, diagnosticCode }));
  });
  return finish(deps, result, 'bounced');
}

/** Spam complaint: COMPLAINT suppression, subscriber COMPLAINED and opted out of the mail's topic. */
export async function recordComplaint(deps: BounceDeps, input: ComplaintInput): Promise<ReportOutcome> {
  const { accountId, messageId, at } = input;
  const messages = messagesOf(deps.messages, accountId);
  const result = await atomically(deps.store, async (tx) => {
    const message = await messages.get(messageId);
    if (!message) return notFound;
    const report: BounceReport = { kind: 'complaint', feedbackType: 'abuse', originalRecipient: null, originalMailFrom: null, originalMessageId: null };
    const effects = decideBounceEffects(report, policyView(message), { softBounceTimes: [], now: at });
    if (!(await messages.markComplained(messageId, at, tx))) return duplicate;
    return applyEffects(deps, tx, message, effects, at, emailFact('email.complained', message, at, { topicId: message.topicId }));
  });
  return finish(deps, result, 'complained');
}

/**
 * A success DSN (MAIL_DELIVERY_CONFIRMATION=dsn): SENT -> DELIVERED with email.delivered. Any other
 * status (already delivered, bounced meanwhile) stays: `duplicate`.
 */
export async function recordDsnDelivery(deps: BounceDeps, input: ComplaintInput): Promise<ReportOutcome> {
  const { accountId, messageId, at } = input;
  const messages = messagesOf(deps.messages, accountId);
  const result = await atomically(deps.store, async (tx) => {
    const message = await messages.get(messageId);
    if (!message) return notFound;
    if (!(await messages.markDeliveredByDsn(messageId, at, tx))) return duplicate;
    await deps.outbox.record(tx, [emailFact('email.delivered', message, at, {})]);
    return recorded(null);
  });
  return finish(deps, result, 'delivered');
}

const policyView = (m: EmailMessageDoc) => ({ messageId: m._id, recipient: m.email, topicId: m.topicId });

/**
 * Records, with the fact, the effects the message transition itself does not cover: suppression and
 * the subscriber status job (whose consumer also opts the subscriber out of the mail's topic on a
 * complaint, read from the message record).
 */
async function applyEffects(deps: BounceDeps, tx: Transaction, message: EmailMessageDoc, effects: BounceEffect[], at: Date, fact: DomainMessage): Promise<ReportOutcome> {
  const suppressions = suppressionsOf(deps.suppressions, message.accountId);
  let suppressed: SuppressionListReason | null = null;
  const jobs: Array<{ subject: string; payload: unknown }> = [];
  for (const effect of effects) {
    if (effect.type === 'suppress' && !(await suppressions.find(effect.email))) {
      const added = await suppressions.add({ _id: deps.newId(), email: effect.email, reason: effect.reason, createdAt: at, messageId: message._id }, tx);
      // Another writer suppressed it between our read and write (possible on MongoDB, where reads are
      // outside the transaction): start over, the read will then see it.
      if (!added) throw new ConcurrentChange(`suppression of message ${message._id}`);
      suppressed = effect.reason;
    }
    if (effect.type === 'subscriberStatus') jobs.push(job('subscriber-status', { accountId: message.accountId, messageId: message._id, status: effect.status }));
    // messageStatus / recordSoftBounce: the message transition (markBounced) is that record;
    // unsubscribeTopic: carried out with the COMPLAINED status (the job's consumer reads message.topicId).
  }
  await deps.outbox.record(tx, [fact, ...jobs]);
  return recorded(suppressed);
}

function finish(deps: BounceDeps, result: ReportOutcome, outcome: EmailOutcome): ReportOutcome {
  if (result.outcome === 'recorded') {
    deps.notifyOutbox();
    deps.emailOutcomes?.inc({ outcome });
  }
  return result;
}
