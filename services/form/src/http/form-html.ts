// A signup form as a server-rendered HTML page (hosted landing pages, and the same form again with
// the errors marked when a browser's submission is refused), plus the thank-you page. No script: the
// browser posts the form as application/x-www-form-urlencoded to the public submissions endpoint.
// Every customer-provided text (form name, labels, placeholders, option labels, consent text) and
// every echoed value goes through escapeHtml.
//
// The names the page posts (read back by `postedSubmission`, so both sides live in one file):
//   values[<personalizationTagName>]  one entry per value (several for CHECKBOX_GROUP, SELECT_MULTIPLE;
//                                     CHECKBOX posts "true" when ticked, nothing when not)
//   consent[text]                     the consent text, posted when the reader ticks the consent box
//   website                           the honeypot: off-screen, labelled "leave empty"; bots fill it
import { contentSecurityPolicy } from '@mailer/kit';
import { escapeHtml, htmlPage, STYLESHEET } from '@mailer/kit/html';
import type { FormFields } from '@mailer/kit/form-body';

/** The input controls of the specification (FormInputControl). */
export type PageInputControl =
  | 'TEXT_INPUT'
  | 'TEXTAREA'
  | 'EMAIL_INPUT'
  | 'NUMBER_INPUT'
  | 'DATE_INPUT'
  | 'CHECKBOX'
  | 'SELECT'
  | 'RADIO_GROUP'
  | 'CHECKBOX_GROUP'
  | 'SELECT_MULTIPLE';

/** What a page needs of one of the form's input fields (the form record's FormField fits). */
export interface PageField {
  personalizationTagName: string;
  label: string;
  placeholder: string;
  isRequired: boolean;
  position: number;
  inputControl: PageInputControl;
  /** Option labels of choice fields; a choice submits its label. */
  optionValues: readonly string[];
}

/** What a page needs of the form record (the form record of store/forms.ts fits). */
export interface PageForm {
  id: string;
  name: string;
  inputFields: readonly PageField[];
  doubleOptIn?: boolean;
  /** Shown beside a required tick box when the form asks for consent; posted back as consent[text]. */
  consentText?: string | null;
}

/** A submitted value as the page keeps it: text, or the ticked options of a multi-choice control. */
export type KeptValue = string | readonly string[] | boolean | number | null | undefined;

export interface FormHtmlState {
  /** By personalizationTagName: what the reader entered, shown again. */
  values?: Readonly<Record<string, KeptValue>>;
  /** By personalizationTagName (or `consent`): the problem to show beside that input. */
  errors?: Readonly<Record<string, string>>;
  /** Whether the consent box was ticked (kept when the form comes back with errors). */
  consentGiven?: boolean;
}

export const HONEYPOT_NAME = 'website';
export const CONSENT_NAME = 'consent[text]';
export const valueName = (personalizationTagName: string): string => `values[${personalizationTagName}]`;

/** The public endpoint the page posts to, relative so it works on every host that serves the page. */
export const submissionPath = (formId: string): string => `/public/forms/${encodeURIComponent(formId)}/submissions`;

/** The policy of these pages: the one inline stylesheet, no script, forms post to this origin only. */
export const PAGES_CSP = contentSecurityPolicy({ inlineStyles: [STYLESHEET] });

const inputId = (tag: string) => `f-${tag}`;
const errorId = (tag: string) => `e-${tag}`;
const attr = (name: string, value: string) => ` ${name}="${escapeHtml(value)}"`;
const flag = (name: string, on: boolean) => (on ? ` ${name}` : '');

function keptTexts(value: KeptValue): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.map(String);
  return [String(value)];
}

/**
 * The whole landing page: heading, the form, its errors marked, the reader's values kept.
 *
 * Its referrer policy is `same-origin`: the browser then posts the form with this page's origin in
 * `Origin` (under the listeners' `no-referrer` it would say `null`, which the submissions endpoint
 * cannot tell from a sandboxed frame on any site), and sends nothing to any other site. The
 * endpoint accepts our own origins (PUBLIC_BASE_URL's, the form's domain) and allowedOrigins.
 */
export function renderFormHtml(form: PageForm, state: FormHtmlState = {}): string {
  return htmlPage(form.name, formBody(form, state), { referrerPolicy: 'same-origin' });
}

/** The form element alone (for a page that adds its own text around it). */
export function formBody(form: PageForm, state: FormHtmlState = {}): string {
  const errors = state.errors ?? {};
  const fields = [...form.inputFields].sort((a, b) => a.position - b.position);
  const parts: string[] = [`<h1>${escapeHtml(form.name)}</h1>`];
  if (Object.keys(errors).length > 0) {
    parts.push('<p class="error" role="alert">Please correct the marked fields and send the form again.</p>');
  }
  parts.push(`<form method="post" action="${escapeHtml(submissionPath(form.id))}" accept-charset="utf-8">`);
  for (const field of fields) parts.push(fieldHtml(field, state.values?.[field.personalizationTagName], errors[field.personalizationTagName]));
  if (form.consentText) parts.push(consentHtml(form.consentText, state.consentGiven === true, errors.consent));
  parts.push(honeypotHtml());
  parts.push('<button type="submit">Subscribe</button>', '</form>');
  return parts.join('\n');
}

function errorHtml(tag: string, error: string | undefined): string {
  return error === undefined ? '' : `<p class="error" id="${escapeHtml(errorId(tag))}">${escapeHtml(error)}</p>`;
}

/** aria attributes that tie an input to its error message. */
function invalidAttrs(tag: string, error: string | undefined): string {
  return error === undefined ? '' : ` aria-invalid="true"${attr('aria-describedby', errorId(tag))}`;
}

function labelText(field: PageField): string {
  return `${escapeHtml(field.label)}${field.isRequired ? ' <span class="required" aria-hidden="true">*</span>' : ''}`;
}

function fieldHtml(field: PageField, value: KeptValue, error: string | undefined): string {
  const tag = field.personalizationTagName;
  const name = valueName(tag);
  const id = inputId(tag);
  const kept = keptTexts(value);
  const common = `${attr('name', name)}${attr('id', id)}${flag('required', field.isRequired)}${invalidAttrs(tag, error)}`;
  const placeholder = field.placeholder ? attr('placeholder', field.placeholder) : '';
  const cls = error === undefined ? 'field' : 'field invalid';
  const wrap = (inner: string) => `<div class="${cls}">\n${inner}\n${errorHtml(tag, error)}</div>`;
  const label = `<label${attr('for', id)}>${labelText(field)}</label>`;
  const text = (type: string, extra = '') => wrap(`${label}\n<input type="${type}"${common}${placeholder}${attr('value', kept[0] ?? '')}${extra}>`);

  switch (field.inputControl) {
    case 'TEXT_INPUT':
      return text('text');
    case 'EMAIL_INPUT':
      return text('email', ' autocomplete="email"');
    case 'NUMBER_INPUT':
      return text('number', ' step="any"');
    case 'DATE_INPUT':
      return text('date');
    case 'TEXTAREA':
      return wrap(`${label}\n<textarea${common}${placeholder} rows="4">${escapeHtml(kept[0] ?? '')}</textarea>`);
    case 'CHECKBOX': {
      const checked = kept[0] === 'true';
      return wrap(`<label><input type="checkbox"${common} value="true"${flag('checked', checked)}> ${labelText(field)}</label>`);
    }
    case 'SELECT':
    case 'SELECT_MULTIPLE': {
      const multiple = field.inputControl === 'SELECT_MULTIPLE';
      // A single select starts on an empty choice, so a required one is not answered by default.
      const empty = multiple ? '' : `<option value="">${escapeHtml(field.placeholder || 'Please choose')}</option>\n`;
      const options = field.optionValues
        .map((o) => `<option${attr('value', o)}${flag('selected', kept.includes(o))}>${escapeHtml(o)}</option>`)
        .join('\n');
      return wrap(`${label}\n<select${common}${flag('multiple', multiple)}>\n${empty}${options}\n</select>`);
    }
    case 'RADIO_GROUP':
    case 'CHECKBOX_GROUP': {
      const type = field.inputControl === 'RADIO_GROUP' ? 'radio' : 'checkbox';
      // A browser can require one of a radio group, not one of several check boxes: the server does.
      const required = type === 'radio' && field.isRequired;
      const options = field.optionValues
        .map(
          (o, i) =>
            `<label><input type="${type}"${attr('name', name)}${attr('id', `${id}-${i}`)}${attr('value', o)}${flag('checked', kept.includes(o))}${flag('required', required)}> ${escapeHtml(o)}</label>`,
        )
        .join('\n');
      return `<fieldset class="${cls}"${invalidAttrs(tag, error)}${attr('id', id)}>\n<legend>${labelText(field)}</legend>\n${options}\n${errorHtml(tag, error)}</fieldset>`;
    }
  }
}

function consentHtml(consentText: string, given: boolean, error: string | undefined): string {
  const cls = error === undefined ? 'field' : 'field invalid';
  return `<div class="${cls}">\n<label><input type="checkbox"${attr('name', CONSENT_NAME)} id="f-consent"${attr('value', consentText)}${flag('checked', given)} required${invalidAttrs('consent', error)}> ${escapeHtml(consentText)}</label>\n${errorHtml('consent', error)}</div>`;
}

/** Off-screen (not display:none, which some bots skip) and out of the tab order; a person never fills it. */
function honeypotHtml(): string {
  return `<div class="hp" aria-hidden="true">\n<label for="f-${HONEYPOT_NAME}">Leave this field empty</label>\n<input type="text" name="${HONEYPOT_NAME}" id="f-${HONEYPOT_NAME}" value="" tabindex="-1" autocomplete="off">\n</div>`;
}

/** The page after a browser's accepted submission: the same words whatever happened to the address. */
export function thankYouPage(form: Pick<PageForm, 'name' | 'doubleOptIn'>): string {
  const text =
    form.doubleOptIn === false
      ? 'Your submission was received.'
      : 'Your submission was received. If you are not subscribed yet, we have sent you an email: please open the link in it to confirm your subscription.';
  return htmlPage(form.name, `<h1>Thank you</h1>\n<p>${escapeHtml(text)}</p>`);
}

/** What a browser's urlencoded post of this page says, in the JSON body's shape. */
export interface PostedSubmission {
  values: Record<string, string | string[] | boolean>;
  consent: { text: string } | null;
  /** The honeypot's content: non-empty means a bot. */
  honeypot: string;
}

/**
 * Reads a browser's post of `renderFormHtml`'s form: `values[tag]` entries become `values.tag` (a list
 * for the multi-choice controls, true/false for a CHECKBOX; an empty text is left out, as an unanswered
 * field), `consent[text]` becomes `consent.text`. Names the form does not have are ignored; the
 * submission's validation decides what the values are worth.
 */
export function postedSubmission(form: PageForm, fields: FormFields): PostedSubmission {
  const values: PostedSubmission['values'] = {};
  for (const field of form.inputFields) {
    const tag = field.personalizationTagName;
    const posted = fields.get(valueName(tag)) ?? [];
    switch (field.inputControl) {
      case 'CHECKBOX':
        values[tag] = posted.includes('true');
        break;
      case 'CHECKBOX_GROUP':
      case 'SELECT_MULTIPLE': {
        const chosen = posted.filter((v) => v !== '');
        if (chosen.length > 0) values[tag] = chosen;
        break;
      }
      default: {
        const first = posted[0];
        if (first !== undefined && first.trim() !== '') values[tag] = first;
      }
    }
  }
  const consentText = fields.get(CONSENT_NAME)?.[0];
  return {
    values,
    consent: consentText ? { text: consentText } : null,
    honeypot: fields.get(HONEYPOT_NAME)?.[0] ?? '',
  };
}

/**
 * The refused submission's problems (a DomainError's `details`, paths `values.<tag>`, `values[<tag>]`
 * or `consent...`) as the per-field messages `renderFormHtml` marks. Problems on no input of the form
 * are kept under their path, so the page still says the form was refused.
 */
export function fieldErrorsOf(details: readonly { path: string; problem: string }[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const { path, problem } of details) {
    const m = /^values(?:\.([a-z][a-z0-9_]*)|\[([a-z][a-z0-9_]*)\])/.exec(path);
    const key = m ? (m[1] ?? m[2]) : path.startsWith('consent') ? 'consent' : path;
    errors[key] ??= problem === 'required' ? 'Please fill in this field.' : problem;
  }
  return errors;
}
