// Form use cases, one per RPC of FormService (the API contract "Forms").
//
// Decisions (published in the OpenAPI document, gateway/src/openapi/form/forms.ts):
// - Input fields are resolved against the subscriber service's catalog at save time (fieldType,
//   personalizationTagName, label default, active options' labels); rules in domain/form-request.ts.
//   A form read back (GET, embedding, and the public pages and submissions) carries the field's tag
//   name and options as the catalog has them now (domain/current-fields.ts): one ListFields per read.
// - Sender profile and confirmation template are checked against the messaging service at save time.
// - activate/deactivate and publish/unpublish are idempotent: the same transition twice answers the
//   form unchanged. Unpublishing a page that is not PUBLISHED changes nothing (a DRAFT stays DRAFT).
//   Publishing a form that is not a PAGE, or a PAGE without routePath, is 409 form_not_publishable.
// - Activating a form whose input fields were archived meanwhile is 409 field_archived.
// - A landing page's custom `domain` must be a VERIFIED sending domain of the form's own account when
//   the installation requires it (asked from the messaging service, which owns sending domains and
//   MAIL_DOMAIN_VERIFICATION): on create, on PUT and again on publish (`409 page_domain_not_verified`).
//   So nobody can hold routes on a domain they have not proven to control; routePaths stay unique per
//   domain across accounts (two accounts that both verified a domain share its routes).
import { conflict, DomainError, GrpcStatus, notFound, PeerUnavailable, type Logger } from '@mailer/kit';
import type { CatalogSource } from '../clients/catalog';
import type { MessagingCatalog } from '../clients/messaging';
import { withCurrentFields } from '../domain/current-fields';
import type { Form } from '../domain/form';
import { activationProblem, publishProblem, resolveFormRequest, type FormRequest, type FormValues } from '../domain/form-request';
import { RoutePathTakenError, type FormReference, type FormRepository } from '../store/forms';

export interface FormDeps {
  forms: FormRepository;
  catalog: CatalogSource;
  messaging: MessagingCatalog;
  publicBaseUrl: string;
  now(): Date;
  newId(): string;
}

export const formNotFound = (formId: string) => notFound('form_not_found', `no form with id ${formId} exists in the account`);

async function existing(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await deps.forms.get(accountId, formId);
  if (!form) throw formNotFound(formId);
  return form;
}

/** A peer's not-found error for a member of the body, with the member named in details. */
function atPath(err: unknown, path: string): unknown {
  if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return new DomainError(err.code, err.errorId, err.message, [{ path, problem: 'not found in the account' }]);
  return err;
}

/** The body resolved against the catalog, its sender profile and template checked in the messaging service. */
async function valuesOf(deps: FormDeps, accountId: string, req: FormRequest, previous: Form | null): Promise<FormValues> {
  const catalog = await deps.catalog.snapshot(accountId);
  const values = resolveFormRequest(req, { catalog, publicBaseUrl: deps.publicBaseUrl, previous });
  await Promise.all([
    values.senderProfileId && deps.messaging.requireSenderProfile(accountId, values.senderProfileId).catch((err) => Promise.reject(atPath(err, 'body.senderProfileId'))),
    values.confirmationTemplateName &&
      deps.messaging.requireTemplate(accountId, values.confirmationTemplateName).catch((err) => Promise.reject(atPath(err, 'body.confirmationTemplateName'))),
    values.domain && deps.messaging.requirePageDomain(accountId, values.domain),
  ]);
  return values;
}

const routeTaken = (err: unknown): unknown =>
  err instanceof RoutePathTakenError
    ? conflict('route_path_taken', `another form already serves routePath ${err.routePath} on ${err.domain ?? 'the default host'}`, [
        { path: 'body.routePath', problem: 'taken on this domain' },
      ])
    : err;

export const listForms = (deps: FormDeps, accountId: string): Promise<Form[]> => deps.forms.list(accountId);

/** The form with its inputs' tag names and options as the field catalog has them now (one catalog read). */
export async function currentForm(catalog: Pick<CatalogSource, 'fields'>, form: Form): Promise<Form> {
  return withCurrentFields(form, await catalog.fields(form.accountId));
}

/**
 * The form as readers meet it (landing page, submissions): as the catalog has it now, or, while the
 * subscriber service does not answer, as it was saved. A reader's signup is not lost to an outage,
 * and nothing stale gets through: a submission's choices are matched against the field's active
 * options again when it is decided (the subscriber service's Signup leaves out one deactivated since).
 */
export async function readerForm(catalog: Pick<CatalogSource, 'fields'>, form: Form, log: Logger): Promise<Form> {
  try {
    return await currentForm(catalog, form);
  } catch (err) {
    if (!(err instanceof PeerUnavailable)) throw err;
    log.warn({ formId: form.id }, 'field catalog unavailable: the form as saved is shown and checked');
    return form;
  }
}

export const getForm = async (deps: FormDeps, accountId: string, formId: string): Promise<Form> => currentForm(deps.catalog, await existing(deps, accountId, formId));

export async function createForm(deps: FormDeps, accountId: string, req: FormRequest): Promise<Form> {
  const values = await valuesOf(deps, accountId, req, null);
  const now = deps.now();
  const form: Form = { id: deps.newId(), accountId, ...values, status: 'ACTIVE', landingPageStatus: 'DRAFT', lastPublishedAt: null, createdAt: now, updatedAt: now };
  try {
    return await deps.forms.create(form);
  } catch (err) {
    throw routeTaken(err);
  }
}

export async function updateForm(deps: FormDeps, accountId: string, formId: string, req: FormRequest): Promise<Form> {
  const previous = await existing(deps, accountId, formId);
  const values = await valuesOf(deps, accountId, req, previous);
  try {
    const updated = await deps.forms.update(accountId, formId, { ...values, updatedAt: deps.now() });
    if (!updated) throw formNotFound(formId);
    return updated;
  } catch (err) {
    throw routeTaken(err);
  }
}

export async function deleteForm(deps: FormDeps, accountId: string, formId: string): Promise<void> {
  if (!(await deps.forms.delete(accountId, formId))) throw formNotFound(formId);
}

export async function activateForm(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await existing(deps, accountId, formId);
  if (form.status === 'ACTIVE') return form;
  const problem = activationProblem(form, await deps.catalog.snapshot(accountId));
  if (problem) throw problem;
  return (await deps.forms.setState(accountId, formId, { status: 'ACTIVE', updatedAt: deps.now() })) ?? Promise.reject(formNotFound(formId));
}

export async function deactivateForm(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await existing(deps, accountId, formId);
  if (form.status === 'INACTIVE') return form;
  return (await deps.forms.setState(accountId, formId, { status: 'INACTIVE', updatedAt: deps.now() })) ?? Promise.reject(formNotFound(formId));
}

export async function publishForm(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await existing(deps, accountId, formId);
  const problem = publishProblem(form);
  if (problem) throw problem;
  if (form.landingPageStatus === 'PUBLISHED') return form;
  if (form.domain) await deps.messaging.requirePageDomain(accountId, form.domain);
  const now = deps.now();
  // Guarded by the state read: a racing publish finds nothing to change and answers the form as it is.
  const published = await deps.forms.setState(accountId, formId, { landingPageStatus: 'PUBLISHED', lastPublishedAt: now, updatedAt: now }, { landingPageStatus: form.landingPageStatus });
  return published ?? existing(deps, accountId, formId);
}

export async function unpublishForm(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await existing(deps, accountId, formId);
  if (form.landingPageStatus !== 'PUBLISHED') return form;
  const unpublished = await deps.forms.setState(accountId, formId, { landingPageStatus: 'UNPUBLISHED', updatedAt: deps.now() }, { landingPageStatus: 'PUBLISHED' });
  return unpublished ?? existing(deps, accountId, formId);
}

/** The active form as a website embeds it; 404 form_inactive while INACTIVE. */
export async function getFormEmbedding(deps: FormDeps, accountId: string, formId: string): Promise<Form> {
  const form = await existing(deps, accountId, formId);
  if (form.status !== 'ACTIVE') throw notFound('form_inactive', 'the form is inactive: activate it to embed it');
  return currentForm(deps.catalog, form);
}

export const formsUsing = (deps: Pick<FormDeps, 'forms'>, accountId: string, ref: FormReference) => deps.forms.referencing(accountId, ref);
