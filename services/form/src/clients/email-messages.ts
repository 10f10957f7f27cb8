// The messaging service as the confirmation mailer sees it: SendEmailMessage with the form's sender
// profile, its template or the built-in confirmation template, and a dedupe key (a redelivered
// submission job gets the message already sent). Messaging's own errors pass through
// (template_not_found, sender_profile_not_found, sender_profile_required); when it does not answer,
// 503 service_unavailable (the job retries).
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { emailMessagesV1 } from '@mailer/proto';

export interface ConfirmationSend {
  accountId: string;
  email: string;
  /** The form's template; null: the built-in confirmation template. */
  templateName: string | null;
  /** null: the template's profile, else the account's default. */
  senderProfileId: string | null;
  substitutionData: Record<string, unknown>;
  dedupeKey: string;
}

export interface EmailSender {
  sendConfirmation(send: ConfirmationSend): Promise<{ messageId: string; status: 'QUEUED' | 'SUPPRESSED' }>;
  close(): void;
}

export function emailSender(address: string, deadlineMs: number, logger?: Logger): EmailSender {
  const peer = {
    service: 'messaging',
    errorId: 'service_unavailable',
    message: 'The messaging service, which sends confirmation mails, is unavailable; retry later.',
    logger,
  };
  const messages = peerClient(createClient(emailMessagesV1.EmailMessageServiceClient, address, deadlineMs), peer);
  return {
    async sendConfirmation(send) {
      const res = await messages.sendEmailMessage({
        accountId: send.accountId,
        templateName: send.templateName ?? '',
        builtinTemplate: send.templateName ? emailMessagesV1.BuiltinTemplate.BUILTIN_TEMPLATE_UNSPECIFIED : emailMessagesV1.BuiltinTemplate.BUILTIN_TEMPLATE_FORM_CONFIRMATION,
        email: send.email,
        substitutionDataJson: JSON.stringify(send.substitutionData),
        eventPropertiesJson: '',
        senderProfileId: send.senderProfileId ?? '',
        dedupeKey: send.dedupeKey,
      });
      const suppressed = res.status === emailMessagesV1.EmailMessageStatus.EMAIL_MESSAGE_STATUS_SUPPRESSED;
      return { messageId: res.messageId, status: suppressed ? 'SUPPRESSED' : 'QUEUED' };
    },
    close: () => messages.close(),
  };
}
