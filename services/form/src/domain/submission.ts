// A public submission's body checked against its form (the API contract "Forms": public submissions), pure:
// the posted values in, the values to store out, or one DomainError listing every problem (400
// validation_failed, `details` paths `values.<personalizationTagName>` so a page can mark each input).
import isEmail from 'validator/lib/isEmail';
import { invalid, type Problem } from '@mailer/kit';
import type { Form, FormField } from './form';

/** Limits of one submission (the OpenAPI document and the README name them). */
export const SUBMISSION_LIMITS = { textLength: 2_000, longTextLength: 10_000, consentText: 2_000, email: 254 } as const;

export type SubmittedValue = string | number | boolean | string[];

export interface SubmissionInput {
  /** Lowercase trimmed address (from the built-in EMAIL input). */
  email: string;
  /** personalizationTagName -> validated value (unanswered optional inputs left out). */
  values: Record<string, SubmittedValue>;
  consent: { text: string } | null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The body's shape: `{values: {...}, consent?: {text}}` and nothing else. */
export function submissionBodyProblems(body: unknown): Problem[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [{ path: '', problem: 'must be a JSON object' }];
  const problems: Problem[] = [];
  for (const key of Object.keys(body)) if (key !== 'values' && key !== 'consent') problems.push({ path: key, problem: 'unknown property' });
  const { values, consent } = body as { values?: unknown; consent?: unknown };
  if (typeof values !== 'object' || values === null || Array.isArray(values)) problems.push({ path: 'values', problem: 'must be an object' });
  if (consent !== undefined && consent !== null) {
    if (typeof consent !== 'object' || Array.isArray(consent)) problems.push({ path: 'consent', problem: 'must be an object {text}' });
    else {
      for (const key of Object.keys(consent)) if (key !== 'text') problems.push({ path: `consent.${key}`, problem: 'unknown property' });
      const text = (consent as { text?: unknown }).text;
      if (typeof text !== 'string' || text.trim() === '') problems.push({ path: 'consent.text', problem: 'must be a non-empty string' });
      else if (text.length > SUBMISSION_LIMITS.consentText) problems.push({ path: 'consent.text', problem: `must have at most ${SUBMISSION_LIMITS.consentText} characters` });
    }
  }
  return problems;
}

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

/** One input's value, or the problem with it. */
function checkValue(field: FormField, raw: unknown): { value: SubmittedValue } | { problem: string } {
  switch (field.fieldType) {
    case 'TEXT':
    case 'LONG_TEXT': {
      if (typeof raw !== 'string') return { problem: 'must be a string' };
      const max = field.fieldType === 'TEXT' ? SUBMISSION_LIMITS.textLength : SUBMISSION_LIMITS.longTextLength;
      return raw.length > max ? { problem: `must have at most ${max} characters` } : { value: raw };
    }
    case 'EMAIL': {
      if (typeof raw !== 'string') return { problem: 'must be a string' };
      const email = raw.trim().toLowerCase();
      const ok = email.length <= SUBMISSION_LIMITS.email && isEmail(email, { allow_display_name: false, allow_ip_domain: false });
      return ok ? { value: email } : { problem: 'must be a valid email address' };
    }
    case 'NUMBER': {
      // A browser's urlencoded post sends numbers as text.
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : NaN;
      return Number.isFinite(n) ? { value: n } : { problem: 'must be a number' };
    }
    case 'DATE': {
      if (typeof raw !== 'string' || !DATE.test(raw) || Number.isNaN(Date.parse(`${raw}T00:00:00Z`)) || new Date(`${raw}T00:00:00Z`).toISOString().slice(0, 10) !== raw) {
        return { problem: 'must be a date YYYY-MM-DD' };
      }
      return { value: raw };
    }
    case 'BOOLEAN':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return { problem: 'must be true or false' };
    case 'SINGLE_CHOICE':
      if (typeof raw !== 'string') return { problem: 'must be a string' };
      return field.optionValues.includes(raw) ? { value: raw } : { problem: `must be one of the options: ${field.optionValues.join(', ')}` };
    case 'MULTI_CHOICE': {
      const list = typeof raw === 'string' ? [raw] : raw;
      if (!Array.isArray(list) || list.some((v) => typeof v !== 'string')) return { problem: 'must be a list of strings' };
      const unknown = (list as string[]).filter((v) => !field.optionValues.includes(v));
      if (unknown.length) return { problem: `must be options of the field: ${field.optionValues.join(', ')}` };
      return { value: [...new Set(list as string[])] };
    }
  }
}

/**
 * The submission's values checked against the form's inputs: required inputs answered, each value of
 * its field type (choices among the options), no value for an input the form does not have. The
 * built-in EMAIL input gives the address.
 */
export function validateSubmission(form: Pick<Form, 'inputFields'>, body: unknown): SubmissionInput {
  const shape = submissionBodyProblems(body);
  if (shape.length) throw invalid('validation_failed', 'The submission is not {values, consent?}.', shape);
  const { values, consent } = body as { values: Record<string, unknown>; consent?: { text: string } | null };
  const problems: Problem[] = [];
  const byTag = new Map(form.inputFields.map((f) => [f.personalizationTagName, f]));
  for (const tag of Object.keys(values)) if (!byTag.has(tag)) problems.push({ path: `values.${tag}`, problem: 'is not an input of this form' });
  const out: Record<string, SubmittedValue> = {};
  let email = '';
  for (const field of form.inputFields) {
    const tag = field.personalizationTagName;
    const raw = Object.prototype.hasOwnProperty.call(values, tag) ? values[tag] : undefined;
    const isEmailInput = field.fieldRef.type === 'BUILT_IN' && field.fieldRef.builtInField === 'EMAIL';
    if (blank(raw) || (field.fieldType === 'BOOLEAN' && field.isRequired && (raw === false || raw === 'false'))) {
      // The address is always required: without it there is no one to sign up.
      if (field.isRequired || isEmailInput) problems.push({ path: `values.${tag}`, problem: 'required' });
      continue;
    }
    const checked = checkValue(field, raw);
    if ('problem' in checked) problems.push({ path: `values.${tag}`, problem: checked.problem });
    else {
      out[tag] = checked.value;
      if (isEmailInput) email = checked.value as string;
    }
  }
  if (problems.length) throw invalid('validation_failed', `The submission has ${problems.length} invalid value(s); see details.`, problems);
  return { email, values: out, consent: consent ? { text: consent.text } : null };
}
