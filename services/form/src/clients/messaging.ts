// The messaging service as the form service sees it when a form is saved: does the sender profile or
// the confirmation template it names exist in the account, and may the account serve a landing page on
// its custom domain (verified, when MAIL_DOMAIN_VERIFICATION=required: the messaging service owns the
// sending domains and the setting)? Its own errors pass through (sender_profile_not_found,
// template_not_found, page_domain_not_verified); when it does not answer, 503 service_unavailable.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { emailTemplatesV1, senderProfilesV1, sendingDomainsV1 } from '@mailer/proto';

export interface MessagingCatalog {
  /** Resolves when the profile exists; throws NOT_FOUND sender_profile_not_found otherwise. */
  requireSenderProfile(accountId: string, senderProfileId: string): Promise<void>;
  /** Resolves when the template exists; throws NOT_FOUND template_not_found otherwise. */
  requireTemplate(accountId: string, name: string): Promise<void>;
  /** Resolves when the account may serve landing pages on the host; throws FAILED_PRECONDITION page_domain_not_verified otherwise. */
  requirePageDomain(accountId: string, domain: string): Promise<void>;
  close(): void;
}

export function messagingCatalog(address: string, deadlineMs: number, logger?: Logger): MessagingCatalog {
  const peer = {
    service: 'messaging',
    errorId: 'service_unavailable',
    message: 'The messaging service, whose sender profiles, templates and sending domains a form names, is unavailable; retry later.',
    logger,
  };
  const profiles = peerClient(createClient(senderProfilesV1.SenderProfileServiceClient, address, deadlineMs), peer);
  const templates = peerClient(createClient(emailTemplatesV1.EmailTemplateServiceClient, address, deadlineMs), peer);
  const domains = peerClient(createClient(sendingDomainsV1.SendingDomainServiceClient, address, deadlineMs), peer);
  return {
    async requireSenderProfile(accountId, senderProfileId) {
      await profiles.getSenderProfile({ accountId, senderProfileId });
    },
    async requireTemplate(accountId, name) {
      await templates.getEmailTemplate({ accountId, name });
    },
    async requirePageDomain(accountId, domain) {
      await domains.requireVerifiedDomain({ accountId, domain, use: sendingDomainsV1.DomainUse.DOMAIN_USE_PAGE });
    },
    close() {
      profiles.close();
      templates.close();
      domains.close();
    },
  };
}
