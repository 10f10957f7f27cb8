// The messaging service as the form service sees it when a form is saved: does the sender profile or
// the confirmation template it names exist in the account? Its own errors pass through
// (sender_profile_not_found, template_not_found); when it does not answer, 503 service_unavailable.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { emailTemplatesV1, senderProfilesV1 } from '@mailer/proto';

export interface MessagingCatalog {
  /** Resolves when the profile exists; throws NOT_FOUND sender_profile_not_found otherwise. */
  requireSenderProfile(accountId: string, senderProfileId: string): Promise<void>;
  /** Resolves when the template exists; throws NOT_FOUND template_not_found otherwise. */
  requireTemplate(accountId: string, name: string): Promise<void>;
  close(): void;
}

export function messagingCatalog(address: string, deadlineMs: number, logger?: Logger): MessagingCatalog {
  const peer = {
    service: 'messaging',
    errorId: 'service_unavailable',
    message: 'The messaging service, whose sender profiles and templates a form names, is unavailable; retry later.',
    logger,
  };
  const profiles = peerClient(createClient(senderProfilesV1.SenderProfileServiceClient, address, deadlineMs), peer);
  const templates = peerClient(createClient(emailTemplatesV1.EmailTemplateServiceClient, address, deadlineMs), peer);
  return {
    async requireSenderProfile(accountId, senderProfileId) {
      await profiles.getSenderProfile({ accountId, senderProfileId });
    },
    async requireTemplate(accountId, name) {
      await templates.getEmailTemplate({ accountId, name });
    },
    close() {
      profiles.close();
      templates.close();
    },
  };
}
