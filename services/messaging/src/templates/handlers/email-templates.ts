// EmailTemplateService: gRPC <-> use cases (app/email-templates.ts), one use case per RPC.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import type { emailTemplatesV1 } from '@mailer/proto';
import type { CatalogDeps } from '../app/catalog-deps';
import {
  createEmailTemplate,
  deleteEmailTemplate,
  getEmailTemplate,
  listEmailTemplates,
  renderEmailTemplate,
  updateEmailTemplate,
  type EmailTemplateRequest,
} from '../app/email-templates';
import type { EmailTemplateDoc } from '../store/email-templates';

export function emailTemplateToProto(t: EmailTemplateDoc): emailTemplatesV1.EmailTemplate {
  return {
    name: t.name,
    subject: t.subject,
    html: t.html,
    text: t.text ?? undefined,
    senderProfileId: t.senderProfileId ?? undefined,
    tracking: { opens: t.tracking.opens, clicks: t.tracking.clicks },
    variables: t.variables,
    version: t.version,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

function input(t: emailTemplatesV1.EmailTemplateInput | undefined): EmailTemplateRequest {
  if (!t) throw invalid('validation_failed', 'template is required', [{ path: 'body', problem: 'required' }]);
  return { name: t.name, subject: t.subject, html: t.html, text: t.text ?? null, senderProfileId: t.senderProfileId ?? null, tracking: t.tracking ?? null };
}

function substitutionData(json: string | undefined): Record<string, unknown> {
  if (json === undefined || json === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('validation_failed', 'substitutionData must be a JSON object', [{ path: 'body.substitutionData', problem: 'must be an object' }]);
  }
  return value as Record<string, unknown>;
}

export function emailTemplateHandlers(deps: CatalogDeps): AsyncHandlers<emailTemplatesV1.EmailTemplateServiceServer> {
  return {
    listEmailTemplates: async (req) => ({ items: (await listEmailTemplates(deps, accountOf(req))).map(emailTemplateToProto) }),
    getEmailTemplate: async (req) => ({ template: emailTemplateToProto(await getEmailTemplate(deps, accountOf(req), req.name)) }),
    createEmailTemplate: async (req) => ({ template: emailTemplateToProto(await createEmailTemplate(deps, accountOf(req), input(req.template))) }),
    updateEmailTemplate: async (req) => ({ template: emailTemplateToProto(await updateEmailTemplate(deps, accountOf(req), req.name, input(req.template))) }),
    deleteEmailTemplate: async (req) => {
      await deleteEmailTemplate(deps, accountOf(req), req.name);
      return {};
    },
    renderEmailTemplate: async (req) =>
      renderEmailTemplate(deps, accountOf(req), req.name, { email: req.email ?? null, substitutionData: substitutionData(req.substitutionDataJson) }),
  };
}
