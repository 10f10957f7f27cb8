// The field catalog: built-in fields, personalization tag names, options and positions (pure).
import { randomUUID } from 'node:crypto';
import { failedPrecondition, invalid, notFound } from '@mailer/kit';
import { assertNoDuplicates, parseId } from './ids';
import { LIMITS } from './limits';
import type { FieldDef, FieldOption, FieldType } from './types';

export type BuiltInFieldName = 'EMAIL' | 'FIRST_NAME';

/** Built-in subscriber attributes: listed first, not stored as fields, never changed through the catalog. */
export const BUILT_IN_FIELDS: ReadonlyArray<{ builtInField: BuiltInFieldName; label: string; personalizationTagName: string; fieldType: FieldType; position: number; required: boolean }> = [
  { builtInField: 'EMAIL', label: 'Email', personalizationTagName: 'email', fieldType: 'EMAIL', position: 0, required: true },
  { builtInField: 'FIRST_NAME', label: 'First name', personalizationTagName: 'first_name', fieldType: 'TEXT', position: 1, required: false },
];
/** Custom fields are numbered after the built-ins: 2, 3, ... in catalog order. */
export const FIRST_CUSTOM_POSITION = BUILT_IN_FIELDS.length;

export const RESERVED_TAG_NAMES: ReadonlySet<string> = new Set(BUILT_IN_FIELDS.map((b) => b.personalizationTagName));

/** A field reference of a catalog RPC: a built-in field by name ("EMAIL", "FIRST_NAME") or a custom field id. */
export function parseFieldRef(raw: string, path = 'fieldId'): { builtIn: BuiltInFieldName } | { id: string } {
  const upper = raw.trim().toUpperCase();
  if (upper === 'EMAIL' || upper === 'FIRST_NAME') return { builtIn: upper };
  return { id: parseId(raw, path) };
}

export function builtInImmutable(name: BuiltInFieldName) {
  return failedPrecondition('built_in_field_immutable', `${name} is a built-in field: it cannot be changed, archived or deleted`);
}

export const isChoice = (t: FieldType): boolean => t === 'SINGLE_CHOICE' || t === 'MULTI_CHOICE';

export function validateFieldLabel(raw: string, path = 'label'): string {
  const label = raw.trim();
  if (label.length === 0 || label.length > LIMITS.fieldLabel) {
    throw invalid('validation_failed', `${path} must be 1..${LIMITS.fieldLabel} characters`, [{ path, problem: `must be 1..${LIMITS.fieldLabel} characters` }]);
  }
  return label;
}

const TAG_NAME = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_TAG_NAME_LENGTH = 64;

export function validatePersonalizationTagName(raw: string): string {
  if (!TAG_NAME.test(raw)) {
    throw invalid(
      'invalid_personalization_tag_name',
      `personalizationTagName "${raw.slice(0, 80)}" must be lowercase ASCII: a letter, then letters, digits or _ (at most 64)`,
      [{ path: 'personalizationTagName', problem: 'must match ^[a-z][a-z0-9_]{0,63}$' }],
    );
  }
  return raw;
}

/**
 * The personalization tag name derived from a label: NFKD, diacritics stripped, lowercase ASCII,
 * every run of other characters one `_`, trimmed of `_`, `f_` in front when it does not start with a
 * letter, `field` when nothing is left; then `_2`, `_3`, ... until it is free in the account
 * (`taken` holds the account's names, the built-ins' included). Always matches the tag-name rule.
 */
export function derivePersonalizationTagName(label: string, taken: ReadonlySet<string>): string {
  let base = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (base.length === 0) base = 'field';
  if (!/^[a-z]/.test(base)) base = `f_${base}`;
  base = base.slice(0, MAX_TAG_NAME_LENGTH).replace(/_+$/, '');
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, MAX_TAG_NAME_LENGTH - suffix.length).replace(/_+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

function validateOptionLabel(raw: string, path: string): string {
  const label = (raw ?? '').trim();
  if (label.length === 0 || label.length > LIMITS.optionLabel) {
    throw invalid('validation_failed', `${path} must be 1..${LIMITS.optionLabel} characters`, [{ path, problem: `must be 1..${LIMITS.optionLabel} characters` }]);
  }
  return label;
}

function assertUniqueLabels(labels: string[], path: string): void {
  const seen = new Map<string, number>();
  labels.forEach((l, i) => {
    const key = l.toLowerCase();
    if (seen.has(key)) {
      throw invalid('validation_failed', `option label "${l}" appears twice`, [{ path: `${path}[${i}].label`, problem: 'duplicate label' }]);
    }
    seen.set(key, i);
  });
}

/** Options of a new field: required (>= 1) for choice types, refused for the others. */
export function newFieldOptions(fieldType: FieldType, labels: readonly string[], newId: () => string = randomUUID): FieldOption[] {
  if (!isChoice(fieldType)) {
    if (labels.length > 0) throw invalid('field_options_not_allowed', `a ${fieldType} field takes no options`, [{ path: 'options', problem: 'must be empty' }]);
    return [];
  }
  if (labels.length === 0) throw invalid('field_options_required', `a ${fieldType} field needs at least one option`, [{ path: 'options', problem: 'at least one option' }]);
  if (labels.length > LIMITS.optionsPerField) {
    throw invalid('validation_failed', `at most ${LIMITS.optionsPerField} options per field`, [{ path: 'options', problem: `more than ${LIMITS.optionsPerField} entries` }]);
  }
  const clean = labels.map((l, i) => validateOptionLabel(l, `options[${i}]`));
  assertUniqueLabels(clean, 'options');
  return clean.map((label, i) => ({ id: newId(), label, position: i + 1, active: true }));
}

export interface OptionPatch {
  id?: string;
  label: string;
  position: number;
  /** Absent means active: listing an option (re)activates it unless it is sent back with active: false. */
  active?: boolean;
}

/**
 * PATCH options: `patch` is the complete list. Entries with an id update that option's label,
 * position and active flag (listing a deactivated option reactivates it; one sent back with
 * active: false stays deactivated, so a GET-then-PATCH round trip changes nothing); entries without
 * an id add options; existing options left out are deactivated, never deleted (subscribers' values
 * keep pointing at them). At least one option must stay active. Order: the listed options by their
 * given position (ties: list order), numbered 1..n; omitted ones follow in their previous order.
 * Labels must stay unique among all options, active or not.
 */
export function patchOptions(fieldType: FieldType, existing: readonly FieldOption[], patch: readonly OptionPatch[], newId: () => string = randomUUID): FieldOption[] {
  if (!isChoice(fieldType)) {
    if (patch.length > 0) throw invalid('field_options_not_allowed', `a ${fieldType} field takes no options`, [{ path: 'options', problem: 'must be empty' }]);
    return [];
  }
  if (patch.length === 0) throw invalid('field_options_required', `a ${fieldType} field needs at least one active option`, [{ path: 'options', problem: 'at least one option' }]);
  const ids = patch.map((p, i) => (p.id === undefined || p.id === '' ? undefined : parseId(p.id, `options[${i}].id`)));
  assertNoDuplicates(ids.filter((x): x is string => x !== undefined), 'options.id');
  const byId = new Map(existing.map((o) => [o.id, o]));
  for (const id of ids) if (id !== undefined && !byId.has(id)) throw notFound('option_not_found', `option ${id} does not belong to this field`);
  const labels = patch.map((p, i) => validateOptionLabel(p.label, `options[${i}].label`));

  const listed = patch
    .map((p, i) => ({ id: ids[i], label: labels[i], position: Number.isFinite(p.position) ? p.position : 0, active: p.active ?? true, index: i }))
    .sort((a, b) => a.position - b.position || a.index - b.index);
  if (!listed.some((l) => l.active)) {
    throw invalid('field_options_required', `a ${fieldType} field needs at least one active option`, [{ path: 'options', problem: 'at least one active option' }]);
  }
  const listedIds = new Set(ids.filter((x): x is string => x !== undefined));
  const dropped = [...existing].filter((o) => !listedIds.has(o.id)).sort((a, b) => a.position - b.position);
  const total = listed.length + dropped.length;
  if (total > LIMITS.optionsPerField) {
    throw invalid('validation_failed', `at most ${LIMITS.optionsPerField} options per field (deactivated ones count)`, [{ path: 'options', problem: `more than ${LIMITS.optionsPerField} options` }]);
  }
  const result: FieldOption[] = [
    ...listed.map((l, i) => ({ id: l.id ?? newId(), label: l.label, position: i + 1, active: l.active })),
    ...dropped.map((o, i) => ({ id: o.id, label: o.label, position: listed.length + i + 1, active: false })),
  ];
  assertUniqueLabels(result.map((o) => o.label), 'options');
  return result;
}

/**
 * Moves one custom field to `position` (catalog numbering: built-ins 0 and 1, custom fields from 2)
 * and renumbers the others contiguously. Returns the new position of every field whose position changes.
 */
export function moveField(fields: ReadonlyArray<Pick<FieldDef, 'id' | 'position'>>, fieldId: string, position: number): Map<string, number> {
  const ordered = [...fields].sort((a, b) => a.position - b.position);
  const last = FIRST_CUSTOM_POSITION + ordered.length - 1;
  if (!Number.isInteger(position) || position < FIRST_CUSTOM_POSITION || position > last) {
    throw invalid('validation_failed', `position must be ${FIRST_CUSTOM_POSITION}..${last} (built-in fields hold 0 and 1)`, [
      { path: 'position', problem: `must be ${FIRST_CUSTOM_POSITION}..${last}` },
    ]);
  }
  const moving = ordered.findIndex((f) => f.id === fieldId);
  const [field] = ordered.splice(moving, 1);
  ordered.splice(position - FIRST_CUSTOM_POSITION, 0, field);
  return renumber(ordered);
}

/** Contiguous positions for fields in the given order: the changed ones. */
export function renumber(ordered: ReadonlyArray<Pick<FieldDef, 'id' | 'position'>>): Map<string, number> {
  const changes = new Map<string, number>();
  ordered.forEach((f, i) => {
    const p = FIRST_CUSTOM_POSITION + i;
    if (f.position !== p) changes.set(f.id, p);
  });
  return changes;
}

/** The catalog of one account, indexed for validating values. */
export class Catalog {
  readonly byId: ReadonlyMap<string, FieldDef>;
  /** Fields a subscriber must have a value for: required and active (an archived required field is not required). */
  readonly requiredFields: readonly FieldDef[];
  private readonly options: Map<string, Map<string, FieldOption>>;

  constructor(readonly fields: readonly FieldDef[]) {
    this.byId = new Map(fields.map((f) => [f.id, f]));
    this.options = new Map(fields.map((f) => [f.id, new Map(f.options.map((o) => [o.id, o]))]));
    this.requiredFields = fields.filter((f) => f.required && f.active);
  }

  option(fieldId: string, optionId: string): FieldOption | undefined {
    return this.options.get(fieldId)?.get(optionId);
  }

  /** In catalog order. */
  get ordered(): FieldDef[] {
    return [...this.fields].sort((a, b) => a.position - b.position);
  }
}
