// Accepting one email message (the API contract "Transactional email"): the one path every mail takes into the
// system (POST /email-messages now; automation steps and RSS issues call it too). The message is
// rendered here, so nothing broken is queued, and it is stored with its body and its delivery job in
// ONE store transaction (the job through the outbox): once the transaction commits nothing can lose
// it, and the answer waits (bounded) until the relay has the job on JetStream.
import { invalid, type Logger } from '@mailer/kit';
import { job } from '@mailer/nats/facts';
import type { Store } from '@mailer/store';
import { canonicalAddress } from '../../templates/domain/sender-profile';
import { checkReservedKeys, composeMessage } from './compose-message';
import type { PublicLinks } from '../../readers/app/public-links';
import { templateForSend } from '../../templates/app/email-templates';
import { builtinTemplate, type BuiltinTemplateName } from '../../templates/domain/builtin-templates';
import { senderForSend } from '../../templates/app/sender-profiles';
import type { DomainPolicy } from '../../templates/app/sending-domains';
import { messagesOf, type EmailKind, type EmailMessageDoc, type MessageCollections, type SuppressionReason, DEDUPE_INDEX } from '../store/messages';
import type { OutboxRepository } from '@mailer/nats';
import { suppressionsOf, type SuppressionDoc } from '../../readers/store/suppressions';
import { DuplicateKeyError, type Collection } from '@mailer/store';

/** A subscriber of the account as a send needs it: render values and the status rules. */
export interface Recipient {
  id: string;
  email: string;
  firstName: string | null;
  /** Display value by personalizationTagName. */
  fields: Record<string, string>;
  /** SubscriberStatus as the API contract names it (ACTIVE, BLOCKED, ...). */
  status: string;
}

export interface RecipientLookup {
  /** The account's subscriber with this canonical address, or null. */
  recipientByEmail(accountId: string, email: string): Promise<Recipient | null>;
}

export interface AcceptDeps {
  store: Store;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  recipients: RecipientLookup;
  links: PublicLinks;
  /** The sender's domain must be VERIFIED in the account when MAIL_DOMAIN_VERIFICATION=required. */
  domains: Pick<DomainPolicy, 'requireVerified'>;
  now(): Date;
  newId(): string;
  /** Wakes the outbox relay. */
  notify(): void;
  /** Waits, bounded, until the committed jobs are on JetStream (false: not yet; the relay goes on). */
  awaitPublished(): Promise<boolean>;
  logger?: Logger;
}

export interface AcceptInput {
  accountId: string;
  kind: EmailKind;
  /** The account's template; empty: `builtinTemplate`. */
  templateName: string;
  /** The system's own template, used when templateName is empty (form confirmations). */
  builtinTemplate?: BuiltinTemplateName | null;
  email: string;
  substitutionData?: Record<string, unknown> | null;
  /** Stored with the message and carried into its facts; never rendered. */
  eventProperties?: Record<string, unknown> | null;
  /** The topic of a marketing mail (unsubscribe link, opt-outs); null for transactional mail. */
  topicId: string | null;
  /** The recipient when the caller already has it (automations, RSS); else it is looked up by address. */
  subscriber?: Recipient | null;
  /** Automation mails: the `event` render value. */
  event?: Record<string, unknown> | null;
  /** The sender profile to send from; null/empty: the template's profile, else the account's default. */
  senderProfileId?: string | null;
  /**
   * Null/empty: none. A non-empty key names one message in the account: a send with a key already
   * used answers that message (same id and status) and stores nothing, so a redelivered job never
   * mails twice. Two concurrent sends with one key are decided by the store's unique index.
   */
  dedupeKey?: string | null;
}

export const MAX_DEDUPE_KEY_LENGTH = 200;

export interface Accepted {
  messageId: string;
  status: 'QUEUED' | 'SUPPRESSED';
}

/** The answer for a message already stored (a repeated dedupe key): its id and the status it was accepted with. */
export const answerOf = (m: Pick<EmailMessageDoc, '_id' | 'status'>): Accepted => ({ messageId: m._id, status: m.status === 'SUPPRESSED' ? 'SUPPRESSED' : 'QUEUED' });


/** Renders, checks suppression and status, instruments, stores message + body + job, then waits for the job's PubAck. */
export async function acceptMessage(deps: AcceptDeps, input: AcceptInput): Promise<Accepted> {
  const { accountId, kind } = input;
  const email = canonicalAddress(input.email);
  if (!email) throw invalid('invalid_email', `email "${input.email.slice(0, 80)}" is not a valid email address`, [{ path: 'body.email', problem: 'not a valid email address' }]);
  checkReservedKeys(input.substitutionData, 'body.substitutionData');
  const dedupeKey = input.dedupeKey || null;
  if (dedupeKey && dedupeKey.length > MAX_DEDUPE_KEY_LENGTH) {
    throw invalid('validation_failed', `dedupeKey may have at most ${MAX_DEDUPE_KEY_LENGTH} characters`, [{ path: 'body.dedupeKey', problem: `longer than ${MAX_DEDUPE_KEY_LENGTH} characters` }]);
  }
  // Before anything else may refuse: a redelivered send answers its message even if, say, the
  // template was deleted since.
  if (dedupeKey) {
    const existing = await messagesOf(deps.messages, accountId).byDedupeKey(dedupeKey);
    if (existing) return answerOf(existing);
  }
  // The recipient (a gRPC call) and the suppression are read while the template and sender are: the
  // refusals keep the API contract's order all the same (a failed lookup is only seen once those passed).
  const recipientLookup = input.subscriber !== undefined ? Promise.resolve(input.subscriber) : deps.recipients.recipientByEmail(accountId, email);
  const suppressionLookup = suppressionsOf(deps.suppressions, accountId).find(email);
  recipientLookup.catch(() => undefined);
  suppressionLookup.catch(() => undefined);
  const builtin = !input.templateName && input.builtinTemplate ? builtinTemplate(input.builtinTemplate) : null;
  const { template, compiled } = builtin ? { template: builtin, compiled: builtin.compiled } : await templateForSend(deps, accountId, input.templateName);
  const sender = await senderForSend(deps, accountId, input.senderProfileId || template.senderProfileId || null);
  const recipient = await recipientLookup;

  // Transactional mail ignores unsubscribes and opt-outs, never a suppression or a BLOCKED status.
  const suppression = await suppressionLookup;
  const suppressionReason: SuppressionReason | null = suppression ? suppression.reason : recipient?.status === 'BLOCKED' ? 'BLOCKED' : null;
  const { message, body } = await composeMessage(deps, {
    accountId,
    kind,
    template: { name: template.name, tracking: template.tracking },
    compiled,
    sender,
    email,
    recipient,
    topicId: input.topicId,
    substitutionData: input.substitutionData ?? {},
    event: input.event ?? null,
    eventProperties: input.eventProperties ?? null,
    dedupeKey,
    suppressionReason,
  });
  const messageId = message._id;
  const status = message.status === 'SUPPRESSED' ? 'SUPPRESSED' : 'QUEUED';

  try {
    await deps.store.transaction(async (tx) => {
      // A SUPPRESSED message is recorded (it shows in GET /email-messages) but has no body and no job.
      await messagesOf(deps.messages, accountId).insert(message, body, tx);
      // The record's id is the JetStream msgID of every (re-)publish of it: a job is stored once.
      if (status === 'QUEUED') await deps.outbox.record(tx, [job('email', { accountId, messageId })]);
    });
  } catch (err) {
    // A concurrent send with the same dedupe key committed first: its message is the answer.
    if (dedupeKey && err instanceof DuplicateKeyError && err.index === DEDUPE_INDEX) {
      const winner = await messagesOf(deps.messages, accountId).byDedupeKey(dedupeKey);
      if (winner) return answerOf(winner);
    }
    throw err;
  }
  if (status === 'QUEUED') {
    deps.notify();
    // Committed is durable (the relay publishes it whatever happens next); the wait makes 202 mean
    // "on JetStream" whenever NATS answers in time.
    if (!(await deps.awaitPublished())) deps.logger?.warn({ messageId }, 'email job not published in time; answering anyway (it stays in the outbox)');
  }
  return { messageId, status };
}
