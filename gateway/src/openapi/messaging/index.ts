import { emailMessageParameters, emailMessagePaths, emailMessageSchemas, emailMessageTags } from './email-messages';
import { automationParameters, automationPaths, automationSchemas, automationTags } from './automations';
import { eventLogSchemas } from './events';
import { emailTemplateParameters, emailTemplatePaths, emailTemplateSchemas } from './email-templates';
import { senderProfileParameters, senderProfilePaths, senderProfileSchemas } from './sender-profiles';
import { sendingDomainParameters, sendingDomainPaths, sendingDomainSchemas } from './sending-domains';
import { suppressionParameters, suppressionPaths, suppressionSchemas, suppressionTags } from './suppressions';
import { broadcastParameters, broadcastPaths, broadcastSchemas, broadcastTags } from './broadcasts';

/** The messaging domain of the OpenAPI document: sender profiles, email templates, suppressions, transactional email, automations, broadcasts. */
export const messagingDomainTags = [
  { name: 'Sender profiles', description: 'Who mail is from: address, display name, reply address; one default per account.' },
  { name: 'Sending domains', description: 'Domains the account has proven to control (a DNS TXT record), each with its own DKIM key: required to send from a domain or serve landing pages on it where the installation requires verification.' },
  { name: 'Email templates', description: 'Liquid templates of subject, html and text, addressed by name; render previews.' },
  ...suppressionTags,
  ...emailMessageTags,
  ...automationTags,
  ...broadcastTags,
];
export const messagingDomainPaths = { ...senderProfilePaths, ...sendingDomainPaths, ...emailTemplatePaths, ...suppressionPaths, ...emailMessagePaths, ...automationPaths, ...broadcastPaths };
export const messagingDomainParameters = { ...senderProfileParameters, ...sendingDomainParameters, ...emailTemplateParameters, ...suppressionParameters, ...emailMessageParameters, ...automationParameters, ...broadcastParameters };
export const messagingDomainSchemas = { ...senderProfileSchemas, ...sendingDomainSchemas, ...emailTemplateSchemas, ...suppressionSchemas, ...emailMessageSchemas, ...eventLogSchemas, ...automationSchemas, ...broadcastSchemas };
