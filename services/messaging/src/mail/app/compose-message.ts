// Composing one message for one recipient: render, instrument (open pixel, click redirects, never
// the unsubscribe link), the List-Unsubscribe headers of marketing mail and its unsubscribe footer
// when the template has no unsubscribe link, and the record as it is stored. Shared by every path
// into the system (app/accept-message.ts for one mail, app/audience-send.ts for a page of an
// audience), so a mail looks the same whichever way it came.
import type { EmailKind, EmailBodyDoc, EmailMessageDoc, SuppressionReason } from '../store/messages';
import { noEngagementYet } from '../store/messages';
import type { SenderProfileDoc } from '../../templates/store/sender-profiles';
import { templateCall } from '../../templates/domain/email-template';
import { invalid } from '@mailer/kit';
import { renderTemplate, RESERVED_SUBSTITUTION_KEYS, type CompiledTemplate } from '@mailer/templates';
import { instrumentHtml } from '../../readers/domain/tracking-html';
import { footerHtml, withTextFooter } from '../domain/unsubscribe-footer';
import type { PublicLinks } from '../../readers/app/public-links';

/** The recipient as a composed mail needs it (a subscriber of the account, or nobody for a bare address). */
export interface ComposeRecipient {
  id: string;
  firstName: string | null;
  /** Display value by personalizationTagName. */
  fields: Record<string, string>;
}

export interface ComposeInput {
  accountId: string;
  kind: EmailKind;
  /** The customer template's name (null for built-in and inline content) and its tracking settings. */
  template: { name: string | null; tracking: { opens: boolean; clicks: boolean } };
  compiled: CompiledTemplate;
  sender: Pick<SenderProfileDoc, '_id' | 'fromEmail' | 'fromName' | 'replyTo'>;
  /** Canonical address. */
  email: string;
  recipient: ComposeRecipient | null;
  /** The topic of a marketing mail (unsubscribe link, opt-outs); null for transactional mail. */
  topicId: string | null;
  /** Top-level render values besides subscriber/event/links (checked for reserved names by the caller). */
  substitutionData: Record<string, unknown>;
  /** Strings of substitutionData that are trusted HTML (an RSS issue's item HTML); none for customer data. */
  trustedHtml?: ReadonlySet<string> | null;
  event: Record<string, unknown> | null;
  eventProperties: Record<string, unknown> | null;
  dedupeKey: string | null;
  /** Set: the message is recorded SUPPRESSED, without body or job. */
  suppressionReason: SuppressionReason | null;
  /** The audience send the message belongs to (CountAudienceSends), null for single mails. */
  audienceKey?: string | null;
}

export interface Composed {
  message: Omit<EmailMessageDoc, 'accountId'>;
  /** null for a SUPPRESSED message (nothing to send). */
  body: Omit<EmailBodyDoc, '_id' | 'accountId'> | null;
}

/**
 * Refuses render values that use the names the renderer supplies (subscriber, event, links), before
 * anything is rendered: `path` names the values in the request (body.substitutionData).
 */
export function checkReservedKeys(data: Record<string, unknown> | null | undefined, path: string): void {
  const reserved = RESERVED_SUBSTITUTION_KEYS.filter((k) => data && Object.prototype.hasOwnProperty.call(data, k));
  if (reserved.length) {
    throw invalid('reserved_substitution_key', `${path.split('.').pop()} may not use the names ${RESERVED_SUBSTITUTION_KEYS.join(', ')}`,
      reserved.map((k) => ({ path: `${path}.${k}`, problem: 'reserved name' })));
  }
}

export async function composeMessage(deps: { links: PublicLinks; now(): Date; newId(): string }, input: ComposeInput): Promise<Composed> {
  const { accountId, kind, recipient, email } = input;
  const messageId = deps.newId();
  const now = deps.now();
  const unsubscribeUrl = kind !== 'TRANSACTIONAL'
    ? deps.links.unsubscribeUrl(accountId, { messageId, ...(recipient ? { subscriberId: recipient.id } : {}), ...(input.topicId ? { topicId: input.topicId } : {}) })
    : null;
  // Marketing mail: the preference page is the unsubscribe page (topics and "unsubscribe from all").
  const manage = unsubscribeUrl ? { unsubscribe: unsubscribeUrl, preferences: unsubscribeUrl } : null;
  const rendered = await templateCall(() => renderTemplate(input.compiled, {
    substitutionData: input.substitutionData,
    // A null-prototype copy: a personalizationTagName can never reach Object.prototype members.
    subscriber: recipient
      ? { email, firstName: recipient.firstName ?? '', fields: Object.assign(Object.create(null) as Record<string, string>, recipient.fields) }
      : { email },
    event: input.event,
    links: manage,
    trustedHtml: input.trustedHtml,
  }));
  const status = input.suppressionReason ? 'SUPPRESSED' : 'QUEUED';
  const tracking = input.template.tracking;
  const tracked = instrumentHtml(
    rendered.html,
    {
      openUrl: deps.links.openUrl(accountId, messageId),
      clickUrl: (i) => deps.links.clickUrl(accountId, messageId, i),
      keep: [unsubscribeUrl],
      footerUnlessKept: manage ? footerHtml(manage) : null,
    },
    tracking,
  );
  const text = manage ? withTextFooter(rendered.text, manage) : rendered.text;
  const message: Omit<EmailMessageDoc, 'accountId'> = {
    _id: messageId,
    kind,
    templateName: input.template.name,
    email,
    subscriberId: recipient?.id ?? null,
    topicId: input.topicId,
    senderProfileId: input.sender._id,
    fromEmail: input.sender.fromEmail,
    fromName: input.sender.fromName,
    replyTo: input.sender.replyTo,
    subject: rendered.subject,
    links: tracked.links,
    tracking: { opens: tracking.opens, clicks: tracking.clicks },
    status,
    suppressionReason: input.suppressionReason,
    history: [{ status, at: now }],
    attempts: [],
    nextAttemptAt: null,
    createdAt: now,
    sentAt: null,
    deliveredAt: null,
    bouncedAt: null,
    complainedAt: null,
    ...noEngagementYet(),
    eventProperties: input.eventProperties,
    dedupeKey: input.dedupeKey,
    ...(input.audienceKey ? { audienceKey: input.audienceKey } : {}),
  };
  const headers: Record<string, string> = unsubscribeUrl
    ? { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }
    : {};
  return { message, body: status === 'QUEUED' ? { html: tracked.html, text, headers } : null };
}
