import { protoEnum } from '@mailer/kit';
import { emailMessagesV1 } from '@mailer/proto';
import type { QueryOf, Schemas } from '../openapi/types';
import type { ItemError } from '../openapi/validator';
import { int64, present } from './numbers';

// Transactional email: API bodies (as validated by the OpenAPI document) <-> messaging service messages.

export const EmailMessageStatuses = protoEnum(emailMessagesV1.EmailMessageStatus, 'EMAIL_MESSAGE_STATUS_');
export const EmailKinds = protoEnum(emailMessagesV1.EmailKind, 'EMAIL_KIND_');

const jsonText = (v: Record<string, unknown> | null | undefined) => (v === undefined || v === null ? '' : JSON.stringify(v));
const parsed = (text: string) => (text ? (JSON.parse(text) as Record<string, unknown>) : null);

export function sendEmailMessageToProto(accountId: string, b: Schemas['SendEmailMessageRequestDto']): emailMessagesV1.SendEmailMessageRequest {
  // The sender profile, dedupe key and built-in templates are for the services' own sends (form confirmations); the
  // customer API has neither (its retries use Idempotency-Key).
  return { accountId, templateName: b.name, email: b.email, substitutionDataJson: jsonText(b.substitutionData), eventPropertiesJson: jsonText(b.eventProperties), senderProfileId: '', dedupeKey: '', builtinTemplate: 0 };
}

type BatchResult = Schemas['SendEmailMessagesResult']['results'][number];

/**
 * The messages the schema accepted, for the service (with their request indexes), and the answers of
 * those it refused (validation_failed, invalid_email, ...: as POST /email-messages would answer them).
 */
export function sendEmailMessagesToProto(accountId: string, b: Schemas['SendEmailMessagesRequest'], itemErrors: ItemError[]) {
  const refused = new Map<number, BatchResult>(itemErrors.map(({ index, error }) => [index, { index, errorId: error.errorId, message: error.message }]));
  const indexes: number[] = [];
  const messages: emailMessagesV1.BatchEmailMessage[] = [];
  b.messages.forEach((m, index) => {
    if (refused.has(index)) return;
    indexes.push(index);
    messages.push({ templateName: m.name, email: m.email, substitutionDataJson: jsonText(m.substitutionData), eventPropertiesJson: jsonText(m.eventProperties), idempotencyKey: m.idempotencyKey ?? '' });
  });
  return { request: { accountId, messages }, indexes, refused };
}

/** Every message's answer in request order: the service's (its indexes mapped back) and the schema's refusals. */
export function batchResultsJson(response: emailMessagesV1.SendEmailMessagesResponse | undefined, indexes: number[], refused: Map<number, BatchResult>) {
  const all = new Map(refused);
  for (const r of response?.results ?? []) {
    const index = indexes[r.index];
    all.set(index, r.errorId ? { index, errorId: r.errorId, message: r.message ?? '' } : { index, messageId: r.messageId!, status: EmailMessageStatuses.fromProto(r.status) as 'QUEUED' | 'SUPPRESSED' });
  }
  return { results: [...all.values()].sort((a, b) => a.index - b.index) };
}

export function listEmailMessagesToProto(accountId: string, q: QueryOf<'listEmailMessages'>): emailMessagesV1.ListEmailMessagesRequest {
  return { accountId, pageNumber: q.pageNumber, pageSize: q.pageSize, email: q.email, templateName: q.templateName, status: EmailMessageStatuses.toProtoOrUnspecified(q.status) };
}

/** EmailMessage of the API contract (plus `history`); members without a value are null. */
export function emailMessageJson(m: emailMessagesV1.EmailMessage) {
  return {
    messageId: m.messageId,
    kind: EmailKinds.fromProto(m.kind),
    templateName: m.templateName ?? null,
    email: m.email,
    subscriberId: m.subscriberId ?? null,
    subject: m.subject,
    status: EmailMessageStatuses.fromProto(m.status),
    suppressionReason: m.suppressionReason ?? null,
    createdAt: m.createdAt,
    sentAt: m.sentAt ?? null,
    deliveredAt: m.deliveredAt ?? null,
    bouncedAt: m.bouncedAt ?? null,
    bounce: m.bounce ? { type: m.bounce.type, diagnosticCode: m.bounce.diagnosticCode ?? null } : null,
    openCount: m.openCount,
    firstOpenedAt: m.firstOpenedAt ?? null,
    machineOpenCount: m.machineOpenCount,
    clickCount: m.clickCount,
    firstClickedAt: m.firstClickedAt ?? null,
    attempts: m.attempts.map((a) => ({ at: a.at, outcome: a.outcome, smtpCode: a.smtpCode ?? null, response: a.response ?? null })),
    eventProperties: parsed(m.eventPropertiesJson),
    history: m.history.map((h) => ({ status: EmailMessageStatuses.fromProto(h.status), at: h.at })),
    broadcastId: m.broadcastId ?? null,
  };
}

export function emailMessagePageJson(page: emailMessagesV1.ListEmailMessagesResponse) {
  return { items: page.items.map(emailMessageJson), pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: int64(page.totalItems), totalPages: page.totalPages };
}

export const emailMessageOf = (res: emailMessagesV1.GetEmailMessageResponse) => emailMessageJson(present(res.message, 'the message'));
