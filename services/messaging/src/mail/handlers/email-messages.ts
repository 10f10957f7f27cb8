// mailer.messaging.v1.EmailMessageService: POST /email-messages and the reads, translated to the use
// cases (app/accept-message.ts, app/email-messages.ts).
import { accountOf, type AsyncHandlers, invalid, pageAnswer, pageOf, protoEnum } from '@mailer/kit';
import { emailMessagesV1 } from '@mailer/proto';
import { acceptBatch, type BatchDeps } from '../app/accept-batch';
import { acceptMessage } from '../app/accept-message';
import { getEmailMessage, listEmailMessages } from '../app/email-messages';
import type { EmailMessageDoc } from '../store/messages';

const Statuses = protoEnum(emailMessagesV1.EmailMessageStatus, 'EMAIL_MESSAGE_STATUS_');
const Kinds = protoEnum(emailMessagesV1.EmailKind, 'EMAIL_KIND_');

/** A free-form JSON object member (the gateway sends valid JSON objects; anything else is a caller bug). */
export function jsonObject(text: string, path: string): Record<string, unknown> | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('validation_failed', `${path} is not valid JSON`, [{ path, problem: 'not valid JSON' }]);
  }
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('validation_failed', `${path} must be an object`, [{ path, problem: 'must be an object' }]);
  return value as Record<string, unknown>;
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

export function messageToProto(m: EmailMessageDoc): emailMessagesV1.EmailMessage {
  return {
    messageId: m._id,
    kind: Kinds.toProto(m.kind),
    templateName: m.templateName ?? undefined,
    email: m.email,
    subscriberId: m.subscriberId ?? undefined,
    subject: m.subject,
    status: Statuses.toProto(m.status),
    suppressionReason: m.suppressionReason ?? undefined,
    createdAt: iso(m.createdAt)!,
    sentAt: iso(m.sentAt),
    deliveredAt: iso(m.deliveredAt),
    bouncedAt: iso(m.bouncedAt),
    bounce: m.bounce ? { type: m.bounce.type, diagnosticCode: m.bounce.diagnosticCode ?? undefined } : undefined,
    openCount: m.openCount,
    firstOpenedAt: iso(m.firstOpenedAt),
    machineOpenCount: m.machineOpenCount,
    clickCount: m.clickCount,
    firstClickedAt: iso(m.firstClickedAt),
    attempts: (m.attempts ?? []).map((a) => ({ at: iso(a.at)!, outcome: a.outcome, smtpCode: a.smtpCode ?? undefined, response: a.response ?? undefined })),
    eventPropertiesJson: m.eventProperties ? JSON.stringify(m.eventProperties) : '',
    history: (m.history ?? []).map((h) => ({ status: Statuses.toProto(h.status), at: iso(h.at)! })),
    broadcastId: m.broadcastId ?? undefined,
  };
}

export function emailMessageHandlers(deps: BatchDeps): AsyncHandlers<emailMessagesV1.EmailMessageServiceServer> {
  return {
    async sendEmailMessage(req) {
      const accepted = await acceptMessage(deps, {
        accountId: accountOf(req),
        kind: 'TRANSACTIONAL',
        templateName: req.templateName,
        email: req.email,
        substitutionData: jsonObject(req.substitutionDataJson, 'body.substitutionData'),
        eventProperties: jsonObject(req.eventPropertiesJson, 'body.eventProperties'),
        topicId: null,
        senderProfileId: req.senderProfileId || null,
        dedupeKey: req.dedupeKey || null,
        builtinTemplate: req.builtinTemplate === emailMessagesV1.BuiltinTemplate.BUILTIN_TEMPLATE_FORM_CONFIRMATION ? 'FORM_CONFIRMATION' : null,
      });
      return { messageId: accepted.messageId, status: Statuses.toProto(accepted.status) };
    },
    async sendEmailMessages(req) {
      const results = await acceptBatch(deps, accountOf(req), req.messages.map((m, i) => ({
        templateName: m.templateName,
        email: m.email,
        substitutionData: jsonObject(m.substitutionDataJson, `body.messages[${i}].substitutionData`),
        eventProperties: jsonObject(m.eventPropertiesJson, `body.messages[${i}].eventProperties`),
        idempotencyKey: m.idempotencyKey,
      })));
      return {
        results: results.map((r) =>
          'messageId' in r
            ? { index: r.index, messageId: r.messageId, status: Statuses.toProto(r.status) }
            : { index: r.index, status: emailMessagesV1.EmailMessageStatus.EMAIL_MESSAGE_STATUS_UNSPECIFIED, errorId: r.errorId, message: r.message },
        ),
      };
    },
    async getEmailMessage(req) {
      return { message: messageToProto(await getEmailMessage(deps, accountOf(req), req.messageId)) };
    },
    async listEmailMessages(req) {
      const { pageNumber, pageSize } = pageOf(req.pageNumber, req.pageSize);
      const { items, totalItems } = await listEmailMessages(deps, accountOf(req), {
        email: req.email,
        templateName: req.templateName,
        status: Statuses.tryFromProto(req.status),
        pageNumber,
        pageSize,
      });
      return { items: items.map(messageToProto), ...pageAnswer({ pageNumber, pageSize }, totalItems) };
    },
  };
}
