// Email template use cases (the API contract "Email templates") and templateForSend, the one way a send gets
// a template and its compiled form.
//
// Decisions (published in the OpenAPI document):
// - PUT may not change `name` (the template's address): a different `name` in the body is
//   `400 template_name_immutable`.
// - An unknown `senderProfileId` is `404 sender_profile_not_found` (the same errorId as everywhere).
// - A template named by an automation step (SEND_EMAIL templateName), a form or a SCHEDULED or SENDING
//   broadcast cannot be deleted (`409 template_in_use`, the users in `details`).
// - Create and PUT test-render the template once, bounded as every render is, for a sample reader and
//   no substitutionData: one that passes a limit with no data at all (`{% for i in (1..100000000) %}`)
//   is `422 template_render_failed` at save, as RSS newsletters' templates are. Limits reached through
//   a caller's values are found when it is rendered with them (send, preview).
import { notFound, failedPrecondition, invalid } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { checkTemplateName, templateCall, trackingOf, type TrackingInput } from '../domain/email-template';
import { compiledTemplate, compileTemplate, renderTemplate, SAMPLE_READER, TemplateError, type CompiledTemplate, type RenderedMessage } from '@mailer/templates';
import { automationRepository } from '../../automations/store/automations';
import { emailTemplatesOf, type EmailTemplateDoc } from '../store/email-templates';
import { senderProfilesOf } from '../store/sender-profiles';
import type { CatalogDeps } from './catalog-deps';
import { senderProfileNotFound } from './sender-profiles';
import { subscriberValueFor } from '../../mail/app/render-values';
import { canonicalAddress } from '../domain/sender-profile';

export const templateNotFound = (name: string) => notFound('template_not_found', `no email template named "${name}" exists in the account`);

/**
 * The template a send renders, with its compiled form (cached: a send does not re-parse). Throws
 * `404 template_not_found`.
 */
export async function templateForSend(deps: { store: Store }, accountId: string, name: string): Promise<{ template: EmailTemplateDoc; compiled: CompiledTemplate }> {
  const template = await emailTemplatesOf(deps.store, accountId).get(name);
  if (!template) throw templateNotFound(name);
  return { template, compiled: await templateCall(() => compiledTemplate(template)) };
}

export interface EmailTemplateRequest {
  name: string;
  subject: string;
  html: string;
  text?: string | null;
  senderProfileId?: string | null;
  tracking?: TrackingInput | null;
}

/**
 * Compiles the sources (refusing syntax errors), test-renders them once for a sample reader with no
 * substitutionData (SAMPLE_READER: a template that passes a render limit whatever its data is
 * `422 template_render_failed` now, not at every send) and checks the sender profile.
 */
async function savedValues(deps: CatalogDeps, accountId: string, req: EmailTemplateRequest) {
  const text = req.text ?? null;
  const compiled = await templateCall(() => compileTemplate({ subject: req.subject, html: req.html, text }));
  await testRender(compiled);
  const senderProfileId = req.senderProfileId ? req.senderProfileId.toLowerCase() : null;
  if (senderProfileId && !(await senderProfilesOf(deps.store, accountId).get(senderProfileId))) throw senderProfileNotFound(senderProfileId);
  return { subject: req.subject, html: req.html, text, senderProfileId, tracking: trackingOf(req.tracking), variables: compiled.variables };
}

async function testRender(compiled: CompiledTemplate): Promise<void> {
  try {
    await renderTemplate(compiled, { substitutionData: {}, ...SAMPLE_READER });
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    throw invalid(err.errorId, `the template fails its test render (a sample reader, no substitutionData): ${err.message}`, err.details);
  }
}

export const listEmailTemplates = (deps: CatalogDeps, accountId: string) => emailTemplatesOf(deps.store, accountId).list();

export async function getEmailTemplate(deps: CatalogDeps, accountId: string, name: string): Promise<EmailTemplateDoc> {
  const template = await emailTemplatesOf(deps.store, accountId).get(name);
  if (!template) throw templateNotFound(name);
  return template;
}

export async function createEmailTemplate(deps: CatalogDeps, accountId: string, req: EmailTemplateRequest): Promise<EmailTemplateDoc> {
  const name = checkTemplateName(req.name);
  const values = await savedValues(deps, accountId, req);
  const now = deps.now();
  return emailTemplatesOf(deps.store, accountId).insert({ _id: deps.newId(), name, ...values, version: 1, createdAt: now, updatedAt: now });
}

export async function updateEmailTemplate(deps: CatalogDeps, accountId: string, name: string, req: EmailTemplateRequest): Promise<EmailTemplateDoc> {
  const templates = emailTemplatesOf(deps.store, accountId);
  if (!(await templates.get(name))) throw templateNotFound(name);
  if (req.name !== name) {
    throw invalid('template_name_immutable', `a template's name cannot change (it is "${name}"); create a new template to use another name`, [
      { path: 'body.name', problem: `must be "${name}"` },
    ]);
  }
  const values = await savedValues(deps, accountId, req);
  const updated = await templates.update(name, { ...values, updatedAt: deps.now() });
  if (!updated) throw templateNotFound(name);
  return updated;
}

export async function deleteEmailTemplate(deps: CatalogDeps, accountId: string, name: string): Promise<void> {
  const templates = emailTemplatesOf(deps.store, accountId);
  if (!(await templates.get(name))) throw templateNotFound(name);
  const automations = await automationRepository(deps.store).namingTemplate(accountId, name);
  if (automations.length) {
    throw failedPrecondition('template_in_use', `the template is used by ${automations.length} automation(s); change their steps first`,
      automations.slice(0, 50).map((a) => ({ path: `automations.${a.id}`, problem: `step of automation "${a.name}" sends this template` })));
  }
  const sending = await deps.broadcasts?.naming(accountId, 'templateName', name, 50);
  if (sending?.count) {
    throw failedPrecondition('template_in_use', `the template is sent by ${sending.count} scheduled or sending broadcast(s); cancel them or wait until they are sent`,
      sending.broadcasts.map((b) => ({ path: `broadcasts.${b._id}`, problem: `broadcast "${b.name}" sends this template` })));
  }
  const forms = await deps.forms?.formsUsing(accountId, { templateName: name });
  if (forms?.count) {
    throw failedPrecondition('template_in_use', `the template is the confirmation mail of ${forms.count} form(s); change them first`,
      forms.forms.map((f) => ({ path: `forms.${f.id}`, problem: `form "${f.name}" sends this template as its confirmation mail` })));
  }
  if (!(await templates.remove(name))) throw templateNotFound(name);
}

export interface RenderPreviewRequest {
  email?: string | null;
  substitutionData?: Record<string, unknown> | null;
}

/** Renders a stored template for one address; nothing is sent or stored. */
export async function renderEmailTemplate(deps: CatalogDeps, accountId: string, name: string, req: RenderPreviewRequest): Promise<RenderedMessage> {
  const { compiled: template } = await templateForSend(deps, accountId, name);
  let subscriber: Record<string, unknown> = {};
  if (req.email !== undefined && req.email !== null) {
    const email = canonicalAddress(req.email);
    if (!email) throw invalid('invalid_email', `email "${req.email.slice(0, 80)}" is not a valid email address`, [{ path: 'body.email', problem: 'not a valid email address' }]);
    subscriber = await subscriberValueFor(deps.subscribers, accountId, email);
  }
  return templateCall(() => renderTemplate(template, { substitutionData: req.substitutionData ?? {}, subscriber }));
}
