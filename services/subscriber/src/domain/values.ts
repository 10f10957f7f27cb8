// Field values: validation per kind, the stored form, typed and display forms, required fields (pure).
import { invalid, notFound, failedPrecondition, type Problem } from '@mailer/kit';
import { KIND_OF_FIELD_TYPE } from '@mailer/proto';
import { canonicalEmail } from './email';
import { Catalog } from './fields';
import { assertNoDuplicates, parseId } from './ids';
import { LIMITS } from './limits';
import type { FieldDef, FieldType, FieldValueInput, StoredValue, ValueInput, ValueKind } from './types';

/** The one value kind each field type takes. */
export const KIND_OF_TYPE: Readonly<Record<FieldType, ValueKind>> = KIND_OF_FIELD_TYPE;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written YYYY-MM-DD (no 2023-02-30, no 2023-2-3). */
export function isCalendarDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= days;
}

function bad(path: string, problem: string, message = `${path}: ${problem}`) {
  return invalid('validation_failed', message, [{ path, problem }]);
}

export function sameValue(a: StoredValue | undefined, b: StoredValue | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

/**
 * Validates one value for `field` and returns its stored form. `existing` is the subscriber's current
 * value of that field: archived fields and inactive options take no NEW values, but re-sending what
 * is already stored (a GET-then-PUT round trip) is accepted.
 */
export function validateValue(field: FieldDef, input: ValueInput | undefined, catalog: Catalog, existing: StoredValue | undefined, path: string): StoredValue {
  if (!field.active && existing === undefined) {
    throw failedPrecondition('field_archived', `field ${field.id} (${field.personalizationTagName}) is archived and takes no new values`, [{ path, problem: 'field is archived' }]);
  }
  if (!input) throw bad(path, 'a value is required');
  const expected = KIND_OF_TYPE[field.fieldType];
  if (input.kind !== expected) {
    throw invalid('field_value_kind_mismatch', `field ${field.personalizationTagName} is ${field.fieldType} and takes ${expected} values, not ${input.kind}`, [
      { path, problem: `kind must be ${expected}` },
    ]);
  }
  const value = normalize(field, input.value, catalog, existing, path);
  if (!field.active && !sameValue(value, existing)) {
    throw failedPrecondition('field_archived', `field ${field.id} (${field.personalizationTagName}) is archived and takes no new values`, [{ path, problem: 'field is archived' }]);
  }
  return value;
}

function normalize(field: FieldDef, raw: StoredValue, catalog: Catalog, existing: StoredValue | undefined, path: string): StoredValue {
  switch (field.fieldType) {
    case 'TEXT':
    case 'LONG_TEXT': {
      const max = field.fieldType === 'TEXT' ? LIMITS.text : LIMITS.longText;
      if (typeof raw !== 'string') throw bad(path, 'text must be a string');
      if (raw.length > max) throw bad(path, `longer than ${max} characters`);
      return raw;
    }
    case 'EMAIL': {
      if (typeof raw !== 'string') throw bad(path, 'text must be a string');
      try {
        return canonicalEmail(raw);
      } catch {
        throw invalid('invalid_email', `${path}: "${raw.slice(0, 80)}" is not a valid email address`, [{ path, problem: 'not a valid email address' }]);
      }
    }
    case 'NUMBER':
      if (typeof raw !== 'number' || !Number.isFinite(raw)) throw bad(path, 'number must be finite');
      return raw;
    case 'DATE':
      if (typeof raw !== 'string' || !isCalendarDate(raw)) throw bad(path, 'date must be a calendar date YYYY-MM-DD');
      return internDate(raw);
    case 'BOOLEAN':
      if (typeof raw !== 'boolean') throw bad(path, 'booleanValue must be a boolean');
      return raw;
    case 'SINGLE_CHOICE': {
      if (typeof raw !== 'string') throw bad(path, 'optionId must be a string');
      const id = parseId(raw, `${path}.optionId`);
      return checkOption(field, id, catalog, existing, `${path}.optionId`);
    }
    case 'MULTI_CHOICE': {
      if (!Array.isArray(raw)) throw bad(path, 'optionIds must be an array');
      if (raw.length === 0) throw bad(path, 'optionIds must hold at least one option id (delete the value to clear it)');
      if (raw.length > LIMITS.optionsPerField) throw bad(path, `more than ${LIMITS.optionsPerField} option ids`);
      const ids = raw.map((r, i) => parseId(String(r), `${path}.optionIds[${i}]`));
      assertNoDuplicates(ids, `${path}.optionIds`);
      return ids.map((id, i) => checkOption(field, id, catalog, existing, `${path}.optionIds[${i}]`)).sort();
    }
  }
}

/** The option's own id string (shared by every subscriber that selects it), if it may be selected. */
function checkOption(field: FieldDef, optionId: string, catalog: Catalog, existing: StoredValue | undefined, path: string): string {
  const option = catalog.option(field.id, optionId);
  if (!option) throw notFound('option_not_found', `option ${optionId} does not belong to field ${field.personalizationTagName}`);
  const alreadyHeld = existing === optionId || (Array.isArray(existing) && existing.includes(optionId));
  if (!option.active && !alreadyHeld) {
    throw invalid('option_inactive', `option ${optionId} ("${option.label}") of field ${field.personalizationTagName} is deactivated and cannot be selected`, [
      { path, problem: 'option is deactivated' },
    ]);
  }
  return option.id;
}

// Dates repeat across subscribers (birthdays, sign-up days): one string per distinct date instead of
// one per subscriber. Bounded, so a stream of distinct dates cannot grow it without limit.
const dates = new Map<string, string>();
function internDate(d: string): string {
  const known = dates.get(d);
  if (known !== undefined) return known;
  if (dates.size >= 50_000) dates.clear();
  dates.set(d, d);
  return d;
}

/**
 * Validates a list of field values against the catalog. Field ids must be UUIDs of fields of the
 * account (field_not_found), each at most once. Returns fieldId -> stored value.
 */
export function validateFieldValues(inputs: readonly FieldValueInput[], catalog: Catalog, existing: Record<string, StoredValue>, path = 'fields'): Record<string, StoredValue> {
  if (inputs.length > LIMITS.fieldValuesPerRequest) throw bad(path, `more than ${LIMITS.fieldValuesPerRequest} values`);
  const ids = inputs.map((f, i) => parseValueFieldId(f.fieldId, `${path}[${i}].fieldId`));
  assertNoDuplicates(ids, `${path}.fieldId`);
  const out: Record<string, StoredValue> = {};
  inputs.forEach((input, i) => {
    const field = catalog.byId.get(ids[i]);
    if (!field) throw notFound('field_not_found', `field ${ids[i]} does not exist`);
    out[ids[i]] = validateValue(field, input.value, catalog, existing[ids[i]], `${path}[${i}].value`);
  });
  return out;
}

/** Field ids in value lists: custom field UUIDs (built-in values travel as email / firstName). */
export function parseValueFieldId(raw: string, path: string): string {
  const upper = (raw ?? '').trim().toUpperCase();
  if (upper === 'EMAIL' || upper === 'FIRST_NAME') {
    throw invalid('validation_failed', `${upper} is a built-in field: set it through ${upper === 'EMAIL' ? 'email' : 'firstName'}`, [{ path, problem: 'built-in field' }]);
  }
  return parseId(raw, path);
}

/** Required (active) custom fields without a value -> required_field_missing naming them all. */
export function assertRequiredFields(catalog: Catalog, values: Record<string, StoredValue>): void {
  const missing = catalog.requiredFields.filter((f) => values[f.id] === undefined);
  if (missing.length === 0) return;
  const details: Problem[] = missing.map((f) => ({ path: `fields.${f.id}`, problem: `required field ${f.personalizationTagName} has no value` }));
  throw invalid('required_field_missing', `required field(s) without a value: ${missing.map((f) => f.personalizationTagName).join(', ')}`, details);
}

/** A stored value in its typed form (kind + value, labels for option kinds). */
export interface TypedValue {
  kind: ValueKind;
  value: StoredValue;
  labels?: string[];
}

export function typedValue(field: FieldDef, stored: StoredValue, catalog: Catalog): TypedValue {
  const kind = KIND_OF_TYPE[field.fieldType];
  if (kind === 'SINGLE_OPTION') return { kind, value: stored, labels: [catalog.option(field.id, stored as string)?.label ?? ''] };
  // option ids as stored: sorted by id, the canonical form of a set (SubscriberData is canonical)
  if (kind === 'MULTI_OPTION') return { kind, value: stored, labels: (stored as string[]).map((id) => catalog.option(field.id, id)?.label ?? '') };
  return { kind, value: stored };
}

/**
 * SubscriberFieldValue.displayValue: text as it is, numbers and dates as written, booleans
 * true/false, option labels joined by ", " (in the order of the typed value's labels).
 */
export function displayValue(field: FieldDef, stored: StoredValue, catalog: Catalog): string {
  const typed = typedValue(field, stored, catalog);
  if (typed.labels) return typed.labels.join(', ');
  return String(stored);
}

/**
 * Every custom field value the subscriber has, displayed, in catalog order: GetSubscriber's values
 * and ListAudience's fields (the personalization tags of a send) are this one list.
 */
export function displayedFieldValues(fields: Record<string, StoredValue>, catalog: Catalog): Array<{ field: FieldDef; displayValue: string }> {
  return catalog.ordered.flatMap((field) => (fields[field.id] === undefined ? [] : [{ field, displayValue: displayValue(field, fields[field.id], catalog) }]));
}
