import type { emailTemplatesV1, senderProfilesV1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';

// Sender profiles and email templates: API bodies <-> messaging service messages. JSON `null` and
// absence both become an absent proto member, and an absent member is answered as `null`.

export const senderProfileToProto = (b: Schemas['SenderProfileRequest']): senderProfilesV1.SenderProfileInput => ({
  name: b.name,
  fromEmail: b.fromEmail,
  fromName: b.fromName,
  replyTo: b.replyTo ?? undefined,
  isDefault: b.isDefault ?? undefined,
});

export const senderProfileJson = (p: senderProfilesV1.SenderProfile | undefined) => ({
  id: p!.id,
  name: p!.name,
  fromEmail: p!.fromEmail,
  fromName: p!.fromName,
  replyTo: p!.replyTo ?? null,
  isDefault: p!.isDefault,
  createdAt: p!.createdAt,
  updatedAt: p!.updatedAt,
});

export const emailTemplateToProto = (b: Schemas['EmailTemplateRequest']): emailTemplatesV1.EmailTemplateInput => ({
  name: b.name,
  subject: b.subject,
  html: b.html,
  text: b.text ?? undefined,
  senderProfileId: b.senderProfileId?.toLowerCase() ?? undefined,
  tracking: b.tracking ? { opens: b.tracking.opens ?? undefined, clicks: b.tracking.clicks ?? undefined } : undefined,
});

export const emailTemplateJson = (t: emailTemplatesV1.EmailTemplate | undefined) => ({
  name: t!.name,
  subject: t!.subject,
  html: t!.html,
  text: t!.text ?? null,
  senderProfileId: t!.senderProfileId ?? null,
  tracking: { opens: t!.tracking?.opens ?? true, clicks: t!.tracking?.clicks ?? true },
  variables: t!.variables,
  version: t!.version,
  createdAt: t!.createdAt,
  updatedAt: t!.updatedAt,
});
