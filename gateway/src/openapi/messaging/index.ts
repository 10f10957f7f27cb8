import { emailTemplateParameters, emailTemplatePaths, emailTemplateSchemas } from './email-templates';
import { senderProfileParameters, senderProfilePaths, senderProfileSchemas } from './sender-profiles';

/** The messaging domain of the OpenAPI document: sender profiles and email templates (more join as they are built). */
export const messagingDomainTags = [
  { name: 'Sender profiles', description: 'Who mail is from: address, display name, reply address; one default per account.' },
  { name: 'Email templates', description: 'Liquid templates of subject, html and text, addressed by name; render previews.' },
];
export const messagingDomainPaths = { ...senderProfilePaths, ...emailTemplatePaths };
export const messagingDomainParameters = { ...senderProfileParameters, ...emailTemplateParameters };
export const messagingDomainSchemas = { ...senderProfileSchemas, ...emailTemplateSchemas };
