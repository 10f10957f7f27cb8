// The signup form record (spec "Signup forms", the API contract "Forms"): what a form collects, where its
// subscribers go, and its hosted landing page. Pure types and rules, no I/O.

export const FORM_TYPES = ['DEFAULT', 'SLIDER', 'INLINE', 'POPUP', 'PAGE'] as const;
export type FormType = (typeof FORM_TYPES)[number];

export const FORM_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type FormStatus = (typeof FORM_STATUSES)[number];

export const LANDING_PAGE_STATUSES = ['DRAFT', 'PUBLISHED', 'UNPUBLISHED'] as const;
export type LandingPageStatus = (typeof LANDING_PAGE_STATUSES)[number];

export const FORM_INPUT_CONTROLS = [
  'TEXT_INPUT',
  'TEXTAREA',
  'EMAIL_INPUT',
  'NUMBER_INPUT',
  'DATE_INPUT',
  'CHECKBOX',
  'SELECT',
  'RADIO_GROUP',
  'CHECKBOX_GROUP',
  'SELECT_MULTIPLE',
] as const;
export type FormInputControl = (typeof FORM_INPUT_CONTROLS)[number];

/** The subscriber service's field types (spec "FieldType"). */
export const FIELD_TYPES = ['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const BUILT_IN_FIELDS = ['EMAIL', 'FIRST_NAME'] as const;
export type BuiltInField = (typeof BUILT_IN_FIELDS)[number];

/** Spec "FieldRef": a built-in field by name, or a custom field by id. */
export type FieldRef = { type: 'BUILT_IN'; builtInField: BuiltInField } | { type: 'CUSTOM'; fieldId: string };

/**
 * One input of a form, resolved against the account's field catalog when the form was saved
 * (spec "FormField"): fieldType, personalizationTagName and optionValues come from the catalog.
 */
export interface FormField {
  fieldRef: FieldRef;
  /** The custom field's id (lowercase), or the built-in field's name (EMAIL, FIRST_NAME): one key for both kinds. */
  fieldId: string;
  /** The name a submission's `values` use for this input. */
  personalizationTagName: string;
  label: string;
  placeholder: string;
  isRequired: boolean;
  /** 0-based display order (the order of the request's inputFields). */
  position: number;
  fieldType: FieldType;
  inputControl: FormInputControl;
  /** Labels of the field's active options, in option order (choice fields); empty otherwise. */
  optionValues: string[];
}

export interface Form {
  id: string;
  accountId: string;
  name: string;
  type: FormType;
  status: FormStatus;
  landingPageStatus: LandingPageStatus;
  /** Last DRAFT/UNPUBLISHED -> PUBLISHED transition; null until the page was first published. */
  lastPublishedAt: Date | null;
  /** In display order. Always holds the built-in EMAIL field. */
  inputFields: FormField[];
  /** Topics a subscriber joins through the form (ids in the subscriber service). */
  topicIds: string[];
  doubleOptIn: boolean;
  /** The messaging sender profile of the confirmation mail; null = the account's default. */
  senderProfileId: string | null;
  /** The messaging template of the confirmation mail; null = the built-in confirmation mail. */
  confirmationTemplateName: string | null;
  /** PAGE forms only: the landing page's path under /public/pages/. */
  routePath: string | null;
  /** PAGE forms only: the custom host serving the page (lowercase); null = the host of PUBLIC_BASE_URL. */
  domain: string | null;
  /** Browser origins allowed to POST submissions (CORS), e.g. `https://shop.example.com`. */
  allowedOrigins: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** Input controls that fit each field type; the first is the default (the API contract: "inputControl defaults from the field type and must fit it"). */
export const INPUT_CONTROLS_BY_FIELD_TYPE: Record<FieldType, readonly FormInputControl[]> = {
  TEXT: ['TEXT_INPUT', 'TEXTAREA'],
  LONG_TEXT: ['TEXTAREA', 'TEXT_INPUT'],
  EMAIL: ['EMAIL_INPUT'],
  NUMBER: ['NUMBER_INPUT', 'TEXT_INPUT'],
  DATE: ['DATE_INPUT', 'TEXT_INPUT'],
  BOOLEAN: ['CHECKBOX'],
  SINGLE_CHOICE: ['SELECT', 'RADIO_GROUP'],
  MULTI_CHOICE: ['CHECKBOX_GROUP', 'SELECT_MULTIPLE'],
};

export const defaultInputControl = (fieldType: FieldType): FormInputControl => INPUT_CONTROLS_BY_FIELD_TYPE[fieldType][0];

export const ROUTE_PATH_PATTERN = /^[a-z0-9-]{1,64}$/;

/** The host (with port, lowercase) of PUBLIC_BASE_URL: the landing pages' default host. */
export function defaultPageHost(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).host.toLowerCase();
}

/**
 * The `domain` a request's Host header names, as forms store it: null for the default host (the
 * host of PUBLIC_BASE_URL), else the lowercase host. Landing pages look forms up with it.
 */
export function pageDomainOfHost(host: string, publicBaseUrl: string): string | null {
  const h = host.trim().toLowerCase();
  return h === defaultPageHost(publicBaseUrl) ? null : h;
}

/**
 * The landing page's address while it is PUBLISHED (the API contract: `https://<domain>/public/pages/<routePath>`,
 * or under PUBLIC_BASE_URL for the default host); null otherwise.
 */
export function publicUrlOf(form: Pick<Form, 'type' | 'landingPageStatus' | 'routePath' | 'domain'>, publicBaseUrl: string): string | null {
  if (form.type !== 'PAGE' || form.landingPageStatus !== 'PUBLISHED' || !form.routePath) return null;
  const path = `/public/pages/${form.routePath}`;
  if (form.domain) return `https://${form.domain}${path}`;
  return `${publicBaseUrl.replace(/\/+$/, '')}${path}`;
}

/** Custom field ids among the form's inputs (the field usage queries' key). */
export const customFieldIdsOf = (inputFields: readonly FormField[]): string[] =>
  inputFields.flatMap((f) => (f.fieldRef.type === 'CUSTOM' ? [f.fieldRef.fieldId.toLowerCase()] : []));
