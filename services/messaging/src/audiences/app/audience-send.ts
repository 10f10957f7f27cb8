// Use cases of AudienceSendService (docs/architecture.md "Audiences"): mail to many, one page of recipients per
// call. The caller (an RSS issue's sender) keeps the cursor; this service keeps the promise that a
// recipient gets at most one mail per send: every message of a send carries the dedupe key
// `<sendKey>:<subscriberId>`, unique in the account, so a page asked again after a crash, a timeout or
// a second replica finds its messages already stored and queues nobody twice.
//
// A page is written in ONE store transaction (messages, bodies, delivery jobs through the outbox):
// after a kill -9 a page is either wholly queued or not at all, and asking it again completes it.
import { invalid, type Logger } from '@mailer/kit';
import { job } from '@mailer/nats/facts';
import { DuplicateKeyError, type Collection, type Store } from '@mailer/store';
import { templateCall } from '../../templates/domain/email-template';
import { compiledTemplate, takeHtmlValues, type CompiledTemplate } from '@mailer/templates';
import { messagesOf, type EmailKind, type MessageCollections } from '../../mail/store/messages';
import type { OutboxRepository } from '@mailer/nats';
import { suppressionsOf, type SuppressionDoc } from '../../readers/store/suppressions';
import { checkReservedKeys, composeMessage, type ComposeRecipient } from '../../mail/app/compose-message';
import type { PublicLinks } from '../../readers/app/public-links';
import { senderForSend } from '../../templates/app/sender-profiles';
import type { DomainPolicy } from '../../templates/app/sending-domains';
import { canonicalAddress } from '../../templates/domain/sender-profile';

export interface AudienceRecipient extends ComposeRecipient {
  email: string;
}

/** The subscriber service's audience pages (clients/audience.ts). */
export interface AudienceLookup {
  page(accountId: string, q: { segmentId: string | null; topicId: string | null; after: string; pageSize: number }): Promise<{ recipients: AudienceRecipient[]; next: string }>;
}

export interface AudienceSendDeps {
  store: Store;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  audience: AudienceLookup;
  links: PublicLinks;
  /** The sender's domain must be VERIFIED in the account when MAIL_DOMAIN_VERIFICATION=required. */
  domains: Pick<DomainPolicy, 'requireVerified'>;
  now(): Date;
  newId(): string;
  /** Wakes the outbox relay. */
  notify(): void;
  logger?: Logger;
}

export interface AudienceContent {
  subject: string;
  html: string;
  css: string;
  /**
   * Top-level render values besides subscriber and links (an RSS issue: items, newsletter). The
   * caller built them: members marked as trusted HTML (`{"$html": ...}`, an RSS item's sanitized
   * summary and content) are printed as markup.
   */
  values: Record<string, unknown>;
}

export interface AudiencePageInput {
  accountId: string;
  sendKey: string;
  kind: EmailKind;
  senderProfileId: string;
  content: AudienceContent;
  segmentId: string | null;
  topicId: string | null;
  after: string;
  pageSize: number;
}

export interface AudiencePageResult {
  recipientCount: number;
  suppressedCount: number;
  next: string;
}

export const MAX_SEND_KEY_LENGTH = 120;
export const DEFAULT_AUDIENCE_PAGE_SIZE = 500;
const MAX_AUDIENCE_PAGE_SIZE = 1000;

function checkInput(input: AudiencePageInput): void {
  if (!input.sendKey || input.sendKey.length > MAX_SEND_KEY_LENGTH) {
    throw invalid('validation_failed', `sendKey must have 1 to ${MAX_SEND_KEY_LENGTH} characters`, [{ path: 'sendKey', problem: 'empty or too long' }]);
  }
  if (input.kind === 'TRANSACTIONAL') throw invalid('validation_failed', 'an audience send is marketing mail, never TRANSACTIONAL', [{ path: 'kind', problem: 'TRANSACTIONAL' }]);
  if (!Number.isInteger(input.pageSize) || input.pageSize < 1 || input.pageSize > MAX_AUDIENCE_PAGE_SIZE) {
    throw invalid('validation_failed', `pageSize must be 1 to ${MAX_AUDIENCE_PAGE_SIZE}`, [{ path: 'pageSize', problem: 'out of range' }]);
  }
  checkReservedKeys(input.content.values, 'content.values');
}

/**
 * Use case QueueAudiencePage: the next page of the audience, each recipient's mail rendered and
 * queued unless the address is suppressed or the send already has a message for them.
 */
export async function queueAudiencePage(deps: AudienceSendDeps, input: AudiencePageInput): Promise<AudiencePageResult> {
  checkInput(input);
  const { accountId, sendKey } = input;
  const [compiled, sender, page] = await Promise.all([
    templateCall(() => compiledTemplate({ subject: input.content.subject, html: input.content.html, css: input.content.css })),
    senderForSend(deps, accountId, input.senderProfileId || null),
    deps.audience.page(accountId, { segmentId: input.segmentId, topicId: input.topicId, after: input.after, pageSize: input.pageSize }),
  ]);
  const values = takeHtmlValues(input.content.values);
  const recipients = page.recipients.flatMap((r) => {
    const email = canonicalAddress(r.email);
    return email ? [{ ...r, email }] : [];
  });
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await queueRecipients(deps, input, { compiled, ...values }, sender, recipients);
      return { ...result, next: page.next };
    } catch (err) {
      // The same page queued concurrently (a retry racing a slow first call) committed first: asked
      // again, its messages are found and skipped.
      if (attempt < 3 && err instanceof DuplicateKeyError) continue;
      throw err;
    }
  }
}

async function queueRecipients(
  deps: AudienceSendDeps,
  input: AudiencePageInput,
  content: { compiled: CompiledTemplate; values: Record<string, unknown>; trustedHtml: ReadonlySet<string> },
  sender: Awaited<ReturnType<typeof senderForSend>>,
  recipients: AudienceRecipient[],
): Promise<Omit<AudiencePageResult, 'next'>> {
  const { accountId, sendKey } = input;
  const repo = messagesOf(deps.messages, accountId);
  const dedupeKeyOf = (r: AudienceRecipient) => `${sendKey}:${r.id}`;
  const [existing, suppressed] = await Promise.all([
    repo.byDedupeKeys(recipients.map(dedupeKeyOf)),
    suppressionsOf(deps.suppressions, accountId).findMany(recipients.map((r) => r.email)),
  ]);
  const done = new Set(existing.map((m) => m.dedupeKey));
  const fresh = recipients.filter((r) => !done.has(dedupeKeyOf(r)) && !suppressed.has(r.email));
  const composed = await Promise.all(fresh.map((r) => composeMessage(deps, {
    accountId,
    kind: input.kind,
    template: { name: null, tracking: { opens: true, clicks: true } },
    compiled: content.compiled,
    sender,
    email: r.email,
    recipient: r,
    topicId: input.topicId,
    substitutionData: content.values,
    trustedHtml: content.trustedHtml,
    event: null,
    eventProperties: null,
    dedupeKey: dedupeKeyOf(r),
    suppressionReason: null,
    audienceKey: sendKey,
  })));
  if (composed.length) {
    await deps.store.transaction(async (tx) => {
      await repo.insertMany(composed, tx);
      await deps.outbox.recordTogether(tx, composed.map(({ message }) => job('email', { accountId, messageId: message._id })));
    });
    deps.notify();
  }
  // Suppressed addresses that already had a message (suppressed since) still count: they were queued.
  const suppressedCount = recipients.filter((r) => !done.has(dedupeKeyOf(r)) && suppressed.has(r.email)).length;
  return { recipientCount: done.size + composed.length, suppressedCount };
}

/** Use case CountAudienceSends: per send key, its queued messages and how many were delivered. */
export async function countAudienceSends(deps: Pick<AudienceSendDeps, 'messages'>, accountId: string, sendKeys: string[]) {
  if (sendKeys.length > 100) throw invalid('validation_failed', 'at most 100 send keys per call', [{ path: 'sendKeys', problem: 'more than 100' }]);
  const repo = messagesOf(deps.messages, accountId);
  return Promise.all(sendKeys.map(async (sendKey) => ({ sendKey, ...(await repo.audienceCounts(sendKey)) })));
}
