import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import {
  emailTemplateJson,
  emailTemplateToProto,
  senderProfileJson,
  senderProfileToProto,
} from '../mapping/email-catalog';
import { created, mount, noContent, ok, operation, type Operation } from './operation';
import { sendingDomainOperations } from './sending-domains';

// Sender profiles, sending domains (routes/sending-domains.ts) and email templates (messaging service):
// one operation per row of the API contract's tables.

export const senderProfileOperations: Operation[] = [
  operation('get', '/sender-profiles', 'listSenderProfiles', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.senderProfiles.listSenderProfiles({ accountId }, call)).items.map(senderProfileJson) }),
  ),
  operation('post', '/sender-profiles', 'createSenderProfile', async ({ clients, accountId, body, call }) => {
    const profile = senderProfileJson((await clients.senderProfiles.createSenderProfile({ accountId, profile: senderProfileToProto(body) }, call)).senderProfile);
    return created(profile, `/sender-profiles/${profile.id}`);
  }),
  operation('get', '/sender-profiles/:senderProfileId', 'getSenderProfile', async ({ clients, accountId, params, call }) =>
    ok(senderProfileJson((await clients.senderProfiles.getSenderProfile({ accountId, senderProfileId: params.senderProfileId }, call)).senderProfile)),
  ),
  operation('put', '/sender-profiles/:senderProfileId', 'updateSenderProfile', async ({ clients, accountId, params, body, call }) =>
    ok(
      senderProfileJson(
        (await clients.senderProfiles.updateSenderProfile({ accountId, senderProfileId: params.senderProfileId, profile: senderProfileToProto(body) }, call)).senderProfile,
      ),
    ),
  ),
  operation('delete', '/sender-profiles/:senderProfileId', 'deleteSenderProfile', async ({ clients, accountId, params, call }) => {
    await clients.senderProfiles.deleteSenderProfile({ accountId, senderProfileId: params.senderProfileId }, call);
    return noContent();
  }),
];

export const emailTemplateOperations: Operation[] = [
  operation('get', '/email-templates', 'listEmailTemplates', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.emailTemplates.listEmailTemplates({ accountId }, call)).items.map(emailTemplateJson) }),
  ),
  operation('post', '/email-templates', 'createEmailTemplate', async ({ clients, accountId, body, call }) => {
    const template = emailTemplateJson((await clients.emailTemplates.createEmailTemplate({ accountId, template: emailTemplateToProto(body) }, call)).template);
    return created(template, `/email-templates/${template.name}`);
  }),
  operation('get', '/email-templates/:name', 'getEmailTemplate', async ({ clients, accountId, params, call }) =>
    ok(emailTemplateJson((await clients.emailTemplates.getEmailTemplate({ accountId, name: params.name }, call)).template)),
  ),
  operation('put', '/email-templates/:name', 'updateEmailTemplate', async ({ clients, accountId, params, body, call }) =>
    ok(emailTemplateJson((await clients.emailTemplates.updateEmailTemplate({ accountId, name: params.name, template: emailTemplateToProto(body) }, call)).template)),
  ),
  operation('delete', '/email-templates/:name', 'deleteEmailTemplate', async ({ clients, accountId, params, call }) => {
    await clients.emailTemplates.deleteEmailTemplate({ accountId, name: params.name }, call);
    return noContent();
  }),
  operation('post', '/email-templates/:name/render', 'renderEmailTemplate', async ({ clients, accountId, params, body, call }) => {
    const data = body?.substitutionData;
    const rendered = await clients.emailTemplates.renderEmailTemplate(
      { accountId, name: params.name, email: body?.email ?? undefined, substitutionDataJson: data ? JSON.stringify(data) : undefined },
      call,
    );
    return ok({ subject: rendered.subject, html: rendered.html, text: rendered.text });
  }),
];

export const emailCatalogRoutes = (clients: ServiceClients): Router => mount([...senderProfileOperations, ...sendingDomainOperations, ...emailTemplateOperations], clients);
