// The rules of a form body (the API contract "Forms"), pure: a request plus a snapshot of the account's field
// catalog and topics in, the values to store out, or the DomainError naming the first rule broken.
// Sender profile and template existence are checked by the use case (they live in another service).
import { DomainError, GrpcStatus, failedPrecondition, invalid, type Problem } from '@mailer/kit';
import {
  INPUT_CONTROLS_BY_FIELD_TYPE,
  ROUTE_PATH_PATTERN,
  defaultInputControl,
  defaultPageHost,
  type FieldRef,
  type FieldType,
  type Form,
  type FormField,
  type FormInputControl,
  type FormType,
} from './form';

/** Limits, published in the OpenAPI document (gateway/src/openapi/form/forms.ts). */
export const FORM_LIMITS = { name: 200, inputFields: 50, label: 200, placeholder: 200, topicIds: 100, allowedOrigins: 20, origin: 253, domain: 253 } as const;

export interface FormFieldRequest {
  fieldRef: FieldRef;
  label: string | null;
  placeholder: string | null;
  isRequired: boolean;
  /** null: the field type's default. */
  inputControl: FormInputControl | null;
}

export interface FormRequest {
  name: string;
  type: FormType;
  inputFields: FormFieldRequest[];
  topicIds: string[];
  /** null: true. */
  doubleOptIn: boolean | null;
  senderProfileId: string | null;
  confirmationTemplateName: string | null;
  routePath: string | null;
  domain: string | null;
  allowedOrigins: string[];
}

/** One field of the account's catalog (built-in or custom), archived ones included. */
export interface CatalogField {
  ref: FieldRef;
  personalizationTagName: string;
  label: string;
  fieldType: FieldType;
  required: boolean;
  internal: boolean;
  active: boolean;
  options: Array<{ label: string; position: number; active: boolean }>;
}

export interface Catalog {
  fields: CatalogField[];
  topics: Array<{ id: string; active: boolean }>;
}

/** What a saved form body becomes (the rest of the record is identity, state and times). */
export type FormValues = Pick<
  Form,
  'name' | 'type' | 'inputFields' | 'topicIds' | 'doubleOptIn' | 'senderProfileId' | 'confirmationTemplateName' | 'routePath' | 'domain' | 'allowedOrigins'
>;

export interface ResolveContext {
  catalog: Catalog;
  publicBaseUrl: string;
  /** The stored form on update (null on create): an archived field it already collects may stay while it is INACTIVE. */
  previous: Form | null;
}

/** A field's key in a form and in the catalog: the built-in field's name, or the custom field's id (lowercase). */
export const fieldKey = (ref: FieldRef): string => (ref.type === 'BUILT_IN' ? ref.builtInField : ref.fieldId.toLowerCase());
const refText = (ref: FieldRef): string => (ref.type === 'BUILT_IN' ? `built-in field ${ref.builtInField}` : `field ${ref.fieldId}`);
const bad = (message: string, path: string, problem: string) => invalid('validation_failed', message, [{ path, problem }]);
const notFoundAt = (errorId: string, message: string, path: string) => new DomainError(GrpcStatus.NOT_FOUND, errorId, message, [{ path, problem: 'not found in the account' }]);

/** Trimmed text within a limit, or null for absent/blank. */
function optionalText(raw: string | null, max: number, path: string): string | null {
  if (raw === null) return null;
  const text = raw.trim();
  if (text.length > max) throw bad(`${path} is longer than ${max} characters`, path, `at most ${max} characters`);
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) throw bad(`${path} holds control characters`, path, 'control characters are not allowed');
  return text === '' ? null : text;
}

/** Resolves the request's inputs against the catalog, in the request's order. */
function resolveInputs(req: FormRequest, ctx: ResolveContext): FormField[] {
  const n = req.inputFields.length;
  if (n === 0 || n > FORM_LIMITS.inputFields) throw bad(`inputFields must hold 1 to ${FORM_LIMITS.inputFields} inputs`, 'body.inputFields', `1 to ${FORM_LIMITS.inputFields} items`);
  const byKey = new Map(ctx.catalog.fields.map((f) => [fieldKey(f.ref), f]));
  const before = new Set(ctx.previous?.inputFields.map((f) => f.fieldId) ?? []);
  const seen = new Set<string>();
  return req.inputFields.map((input, position) => {
    const at = `body.inputFields[${position}]`;
    const key = fieldKey(input.fieldRef);
    if (seen.has(key)) throw invalid('form_field_duplicate', `the form names ${refText(input.fieldRef)} twice`, [{ path: `${at}.fieldRef`, problem: 'already an input of the form' }]);
    seen.add(key);
    const field = byKey.get(key);
    if (!field) throw notFoundAt('field_not_found', `no ${refText(input.fieldRef)} exists in the account`, `${at}.fieldRef`);
    // An archived field takes no new values: it cannot join a form. One the (inactive) form already
    // collected may stay; activation refuses it (activationProblems).
    if (!field.active && !(before.has(key) && ctx.previous?.status === 'INACTIVE')) {
      throw failedPrecondition('field_archived', `${refText(input.fieldRef)} is archived: it cannot be an input of a form`, [{ path: `${at}.fieldRef`, problem: 'archived' }]);
    }
    if (field.internal) throw invalid('form_field_internal', `${refText(input.fieldRef)} is internal: internal fields are hidden from subscriber-facing forms`, [{ path: `${at}.fieldRef`, problem: 'internal field' }]);
    const allowed = INPUT_CONTROLS_BY_FIELD_TYPE[field.fieldType];
    const inputControl = input.inputControl ?? defaultInputControl(field.fieldType);
    if (!allowed.includes(inputControl)) {
      throw invalid('form_input_control_invalid', `inputControl ${inputControl} does not fit a ${field.fieldType} field; use one of ${allowed.join(', ')}`, [
        { path: `${at}.inputControl`, problem: `one of ${allowed.join(', ')}` },
      ]);
    }
    return {
      fieldRef: input.fieldRef.type === 'BUILT_IN' ? input.fieldRef : { type: 'CUSTOM', fieldId: key },
      fieldId: key,
      personalizationTagName: field.personalizationTagName,
      label: optionalText(input.label, FORM_LIMITS.label, `${at}.label`) ?? field.label,
      placeholder: optionalText(input.placeholder, FORM_LIMITS.placeholder, `${at}.placeholder`) ?? '',
      isRequired: input.isRequired,
      position,
      fieldType: field.fieldType,
      inputControl,
      optionValues: optionValuesOf(field),
    };
  });
}

/** A choice field's active options' labels, in option order; empty for other fields. */
export function optionValuesOf(field: CatalogField): string[] {
  if (field.fieldType !== 'SINGLE_CHOICE' && field.fieldType !== 'MULTI_CHOICE') return [];
  return field.options
    .filter((o) => o.active)
    .sort((a, b) => a.position - b.position)
    .map((o) => o.label);
}

/** The built-in EMAIL input is required, and so is every field the catalog marks required (spec: "required in signup workflows"). */
function checkRequiredInputs(inputs: FormField[], catalog: Catalog): void {
  const email = inputs.find((f) => f.fieldId === 'EMAIL');
  if (!email || !email.isRequired) {
    throw invalid('form_email_field_required', 'inputFields must hold the built-in EMAIL field with isRequired true: a signup needs an address', [
      { path: 'body.inputFields', problem: email ? 'EMAIL must have isRequired true' : 'no input for the built-in EMAIL field' },
    ]);
  }
  const problems: Problem[] = [];
  for (const field of catalog.fields) {
    if (!field.required || !field.active || field.internal) continue;
    const key = fieldKey(field.ref);
    const input = inputs.find((f) => f.fieldId === key);
    if (!input) problems.push({ path: 'body.inputFields', problem: `${refText(field.ref)} (${field.personalizationTagName}) is required in signups: add it with isRequired true` });
    else if (!input.isRequired) problems.push({ path: `body.inputFields[${input.position}].isRequired`, problem: `${field.personalizationTagName} is a required field: isRequired must be true` });
  }
  if (problems.length) throw invalid('form_required_field_missing', 'the form must collect every required field of the account, as required', problems);
}

function resolveTopics(topicIds: string[], catalog: Catalog): string[] {
  if (topicIds.length > FORM_LIMITS.topicIds) throw bad(`at most ${FORM_LIMITS.topicIds} topicIds`, 'body.topicIds', `at most ${FORM_LIMITS.topicIds} items`);
  const ids = topicIds.map((id) => id.toLowerCase());
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0) throw invalid('duplicate_ids', `topicIds holds ${ids[dup]} twice`, [{ path: `body.topicIds[${dup}]`, problem: 'duplicate id' }]);
  const topics = new Map(catalog.topics.map((t) => [t.id.toLowerCase(), t]));
  ids.forEach((id, i) => {
    const topic = topics.get(id);
    if (!topic) throw notFoundAt('topic_not_found', `no topic with id ${id} exists in the account`, `body.topicIds[${i}]`);
    if (!topic.active) throw invalid('topic_inactive', `topic ${id} is not active: a form cannot subscribe readers to it`, [{ path: `body.topicIds[${i}]`, problem: 'inactive topic' }]);
  });
  return ids;
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A custom host for a landing page: lowercase DNS name (optionally with a port); null when it is the default host. */
function resolveDomain(raw: string | null, publicBaseUrl: string): string | null {
  if (raw === null) return null;
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (domain === defaultPageHost(publicBaseUrl)) return null; // e.g. 127.0.0.1:8080 in development
  const [host, port, ...rest] = domain.split(':');
  const hostOk = domain.length <= FORM_LIMITS.domain && host.includes('.') && host.split('.').every((l) => HOST_LABEL.test(l)) && !/^[0-9.]+$/.test(host);
  const portOk = port === undefined || (/^[0-9]{1,5}$/.test(port) && Number(port) > 0 && Number(port) < 65536);
  if (!hostOk || !portOk || rest.length) throw bad('domain must be a host name such as pages.example.com', 'body.domain', 'a DNS host name (letters, digits, hyphens, dots)');
  return domain;
}

function resolveOrigins(origins: string[]): string[] {
  if (origins.length > FORM_LIMITS.allowedOrigins) throw bad(`at most ${FORM_LIMITS.allowedOrigins} allowedOrigins`, 'body.allowedOrigins', `at most ${FORM_LIMITS.allowedOrigins} items`);
  const out: string[] = [];
  origins.forEach((raw, i) => {
    const path = `body.allowedOrigins[${i}]`;
    let url: URL | null = null;
    try {
      url = raw.length <= FORM_LIMITS.origin ? new URL(raw.trim()) : null;
    } catch {
      url = null;
    }
    // An origin is scheme://host[:port] and nothing else: what a browser sends in its Origin header.
    const ok = url && (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash && /^[a-z]+:\/\/[^/]+\/?$/i.test(raw.trim());
    if (!ok) throw bad('allowedOrigins holds something that is not an origin (scheme://host[:port])', path, 'an origin such as https://shop.example.com');
    if (!out.includes(url!.origin)) out.push(url!.origin);
  });
  return out;
}

/**
 * The values to store for a form body, or the DomainError of the first rule it breaks. Ids come
 * back lowercase; texts trimmed; routePath and domain only on PAGE forms.
 */
export function resolveFormRequest(req: FormRequest, ctx: ResolveContext): FormValues {
  const name = optionalText(req.name, FORM_LIMITS.name, 'body.name');
  if (!name) throw bad('name must not be blank', 'body.name', 'required, 1-200 characters');
  const isPage = req.type === 'PAGE';
  if (!isPage && (req.routePath !== null || req.domain !== null)) {
    throw invalid('form_route_not_allowed', `routePath and domain belong to PAGE forms only; this form is ${req.type}`, [
      { path: req.routePath !== null ? 'body.routePath' : 'body.domain', problem: 'only for type PAGE' },
    ]);
  }
  if (req.routePath !== null && !ROUTE_PATH_PATTERN.test(req.routePath)) throw bad('routePath must match ^[a-z0-9-]{1,64}$', 'body.routePath', 'lowercase letters, digits and hyphens, 1-64');
  const inputFields = resolveInputs(req, ctx);
  checkRequiredInputs(inputFields, ctx.catalog);
  const values: FormValues = {
    name,
    type: req.type,
    inputFields,
    topicIds: resolveTopics(req.topicIds, ctx.catalog),
    doubleOptIn: req.doubleOptIn ?? true,
    senderProfileId: req.senderProfileId ? req.senderProfileId.toLowerCase() : null,
    confirmationTemplateName: req.confirmationTemplateName || null,
    routePath: req.routePath,
    domain: resolveDomain(req.domain, ctx.publicBaseUrl),
    allowedOrigins: resolveOrigins(req.allowedOrigins),
  };
  // A published page keeps its address until it is unpublished: it cannot lose its route under readers.
  const prev = ctx.previous;
  if (prev?.landingPageStatus === 'PUBLISHED' && (values.type !== 'PAGE' || values.routePath === null)) {
    throw failedPrecondition('landing_page_published', 'the landing page is published: unpublish it before changing the form type or removing its routePath', [
      { path: values.type !== 'PAGE' ? 'body.type' : 'body.routePath', problem: 'the landing page is PUBLISHED' },
    ]);
  }
  return values;
}

/** Why a form cannot be activated: inputs whose field was archived meanwhile (null: it can). */
export function activationProblem(form: Form, catalog: Catalog): DomainError | null {
  const archived = new Set(catalog.fields.filter((f) => !f.active).map((f) => fieldKey(f.ref)));
  const problems = form.inputFields.filter((f) => archived.has(f.fieldId) || !catalog.fields.some((c) => fieldKey(c.ref) === f.fieldId));
  if (!problems.length) return null;
  return failedPrecondition(
    'field_archived',
    'the form collects archived fields: an active form would write them; replace those inputs first',
    problems.map((f) => ({ path: `inputFields[${f.position}]`, problem: `${f.personalizationTagName} is archived` })),
  );
}

/** Why a landing page cannot be published (null: it can). */
export function publishProblem(form: Form): DomainError | null {
  if (form.type !== 'PAGE') return failedPrecondition('form_not_publishable', `only PAGE forms have a landing page; this form is ${form.type}`, [{ path: 'type', problem: 'not PAGE' }]);
  if (!form.routePath) return failedPrecondition('form_not_publishable', 'the form has no routePath: set one (PUT) before publishing its landing page', [{ path: 'routePath', problem: 'required to publish' }]);
  return null;
}
