// The mail of a broadcast: its template with one subject per variant (compiled once), its sender, and
// one reader's message composed from them (kind BROADCAST, marketing mail of the broadcast's topic:
// List-Unsubscribe and the unsubscribe footer come with composeMessage). Shared by the send and the
// test sends, so a test mail is the mail the readers get.
import { createHash } from 'node:crypto';
import { DomainError, GrpcStatus, Lru } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { compileTemplate, type CompiledTemplate } from '@mailer/templates';
import { variantSubjects } from '../domain/broadcast';
import { templateCall } from '../../templates/domain/email-template';
import type { BroadcastDoc } from '../store/broadcasts';
import type { EmailTemplateDoc } from '../../templates/store/email-templates';
import type { SuppressionReason } from '../../mail/store/messages';
import type { SenderProfileDoc } from '../../templates/store/sender-profiles';
import type { ComposeRecipient, Composed } from '../../mail/app/compose-message';
import { composeMessage } from '../../mail/app/compose-message';
import { templateForSend } from '../../templates/app/email-templates';
import type { PublicLinks } from '../../readers/app/public-links';
import { senderForSend } from '../../templates/app/sender-profiles';
import type { DomainPolicy } from '../../templates/app/sending-domains';

export interface BroadcastContent {
  template: EmailTemplateDoc;
  sender: SenderProfileDoc;
  /** By variant (index 0 without an A/B test): the template with that subject. */
  variants: CompiledTemplate[];
}

export interface MailDeps {
  store: Store;
  links: PublicLinks;
  domains: Pick<DomainPolicy, 'requireVerified'>;
  now(): Date;
  newId(): string;
}

/** Templates with a broadcast's subject, by (template, version, subject): a stored version never changes. */
const compiled = new Lru<string, CompiledTemplate>(200, 64 * 1024 * 1024);

function withSubject(template: EmailTemplateDoc, subject: string): Promise<CompiledTemplate> {
  const key = `${template._id}:${template.version}:${createHash('sha256').update(subject).digest('base64url')}`;
  const hit = compiled.get(key);
  if (hit) return Promise.resolve(hit);
  return templateCall(() => {
    const c = compileTemplate({ subject, html: template.html, text: template.text });
    compiled.set(key, c, subject.length + template.html.length + (template.text?.length ?? 0));
    return c;
  });
}

/**
 * The template (404 template_not_found), the sender (the broadcast's profile, else the template's,
 * else the account's default; 404, 409 sender_profile_required / sender_domain_not_verified) and each
 * variant's compiled form. `subjectPrefix` marks test mail.
 */
export async function contentOf(deps: MailDeps, b: BroadcastDoc, subjectPrefix = ''): Promise<BroadcastContent> {
  const { template } = await templateForSend(deps, b.accountId, b.templateName);
  const [sender, variants] = await Promise.all([
    senderForSend(deps, b.accountId, b.senderProfileId ?? template.senderProfileId ?? null),
    Promise.all(variantSubjects(b, template.subject).map((subject) => withSubject(template, subjectPrefix + subject))),
  ]);
  return { template, sender, variants };
}

/** A message's dedupe key in the account: one mail per reader and broadcast, whatever happens. */
export const audienceKeyOf = (broadcastId: string) => `broadcast:${broadcastId}`;

export interface ReaderMail {
  email: string;
  recipient: ComposeRecipient | null;
  variant: number | null;
  /** A test send: not part of the audience (no audience key, no dedupe key), counted nowhere. */
  test?: boolean;
  suppressionReason?: SuppressionReason | null;
}

/** One reader's message, rendered. A render failure is thrown (DomainError template_render_failed). */
export async function composeBroadcastMail(deps: MailDeps, b: BroadcastDoc, content: BroadcastContent, mail: ReaderMail): Promise<Composed> {
  const audience = !mail.test && mail.recipient;
  const composed = await composeMessage(deps, {
    accountId: b.accountId,
    kind: 'BROADCAST',
    template: { name: content.template.name, tracking: content.template.tracking },
    compiled: content.variants[mail.variant ?? 0],
    sender: content.sender,
    email: mail.email,
    recipient: mail.recipient,
    topicId: b.topicId,
    substitutionData: {},
    event: null,
    eventProperties: null,
    dedupeKey: audience ? `${audienceKeyOf(b._id)}:${mail.recipient!.id}` : null,
    suppressionReason: mail.suppressionReason ?? null,
    audienceKey: audience ? audienceKeyOf(b._id) : null,
  });
  composed.message.broadcastId = b._id;
  if (mail.variant !== null) composed.message.variant = mail.variant;
  return composed;
}

/** Nothing to render: the record of a mail that could not be rendered is composed with it. */
const NOTHING = compileTemplate({ subject: '', html: '' });

/**
 * A reader whose mail could not be rendered (a render limit hit by their values): recorded as a
 * FAILED message with the reason, never sent, so the reader is accounted for and the others go on.
 */
export async function failedMail(deps: MailDeps, b: BroadcastDoc, content: BroadcastContent, mail: ReaderMail, err: DomainError): Promise<Composed> {
  const { message } = await composeBroadcastMail(deps, b, { ...content, variants: content.variants.map(() => NOTHING) }, mail);
  const at = deps.now();
  const attempt = { at, outcome: 'FAILED' as const, smtpCode: null, response: `${err.errorId}: ${err.message}`.slice(0, 500) };
  return { message: { ...message, links: [], status: 'FAILED', history: [{ status: 'FAILED', at }], attempts: [attempt] }, body: null };
}

/** A render failure of one reader's mail (its values hit a limit); anything else is the send's failure. */
export const isRenderFailure = (err: unknown): err is DomainError => err instanceof DomainError && err.code === GrpcStatus.INVALID_ARGUMENT && err.errorId === 'template_render_failed';
