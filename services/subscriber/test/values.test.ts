import { GrpcStatus } from '@mailer/kit';
import { Catalog } from '../src/domain/fields';
import type { FieldType, ValueInput, ValueKind } from '../src/domain/types';
import { assertRequiredFields, displayValue, isCalendarDate, KIND_OF_TYPE, typedValue, validateFieldValues, validateValue } from '../src/domain/values';
import { errorIdOf, errorOf, field, uuid } from './helpers';

const v = (kind: ValueKind, value: ValueInput['value']): ValueInput => ({ kind, value });

describe('isCalendarDate', () => {
  it.each(['2024-02-29', '2000-02-29', '1999-12-31', '0001-01-01'])('accepts %p', (d) => expect(isCalendarDate(d)).toBe(true));
  it.each(['2023-02-29', '1900-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-01-00', '2024-1-5', '24-01-05', '2024-01-05T00:00:00Z', 'yesterday', ''])(
    'refuses %p',
    (d) => expect(isCalendarDate(d)).toBe(false),
  );
});

describe('validateValue per kind', () => {
  const cases: Array<[FieldType, ValueInput, unknown]> = [
    ['TEXT', v('TEXT', 'hello'), 'hello'],
    ['TEXT', v('TEXT', ''), ''],
    ['LONG_TEXT', v('TEXT', 'x'.repeat(100_000)), 'x'.repeat(100_000)],
    ['EMAIL', v('EMAIL', '  Work@Example.ORG '), 'work@example.org'],
    ['NUMBER', v('NUMBER', -12.5), -12.5],
    ['NUMBER', v('NUMBER', 0), 0],
    ['DATE', v('DATE', '2024-02-29'), '2024-02-29'],
    ['BOOLEAN', v('BOOLEAN', false), false],
  ];
  it.each(cases)('%s accepts %p', (type, input, stored) => {
    const f = field(type);
    expect(validateValue(f, input, new Catalog([f]), undefined, 'value')).toEqual(stored);
  });

  it('maps every field type to exactly one kind', () => {
    expect(KIND_OF_TYPE).toEqual({
      TEXT: 'TEXT',
      LONG_TEXT: 'TEXT',
      EMAIL: 'EMAIL',
      NUMBER: 'NUMBER',
      DATE: 'DATE',
      BOOLEAN: 'BOOLEAN',
      SINGLE_CHOICE: 'SINGLE_OPTION',
      MULTI_CHOICE: 'MULTI_OPTION',
    });
  });

  const kinds: ValueKind[] = ['TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_OPTION', 'MULTI_OPTION'];
  const types = Object.keys(KIND_OF_TYPE) as FieldType[];
  it.each(types.flatMap((t) => kinds.filter((k) => k !== KIND_OF_TYPE[t]).map((k) => [t, k] as const)))('%s refuses a %s value with field_value_kind_mismatch', (t, k) => {
    const f = field(t);
    expect(errorOf(() => validateValue(f, v(k, 'x'), new Catalog([f]), undefined, 'fields[0].value'))).toMatchObject({
      errorId: 'field_value_kind_mismatch',
      code: GrpcStatus.INVALID_ARGUMENT,
      details: [{ path: 'fields[0].value', problem: `kind must be ${KIND_OF_TYPE[t]}` }],
    });
  });

  it.each([
    ['TEXT', v('TEXT', 'x'.repeat(10_001)), 'validation_failed'],
    ['LONG_TEXT', v('TEXT', 'x'.repeat(100_001)), 'validation_failed'],
    ['TEXT', v('TEXT', 5), 'validation_failed'],
    ['EMAIL', v('EMAIL', 'not-an-address'), 'invalid_email'],
    ['NUMBER', v('NUMBER', Number.NaN), 'validation_failed'],
    ['NUMBER', v('NUMBER', Number.POSITIVE_INFINITY), 'validation_failed'],
    ['NUMBER', v('NUMBER', '5'), 'validation_failed'],
    ['DATE', v('DATE', '2023-02-29'), 'validation_failed'],
    ['DATE', v('DATE', '2023-02-03T10:00:00Z'), 'validation_failed'],
    ['BOOLEAN', v('BOOLEAN', 'true'), 'validation_failed'],
  ] as const)('%s refuses %p with %s', (type, input, errorId) => {
    const f = field(type);
    expect(errorIdOf(() => validateValue(f, input, new Catalog([f]), undefined, 'value'))).toBe(errorId);
  });

  it('refuses a missing value', () => {
    const f = field('TEXT');
    expect(errorIdOf(() => validateValue(f, undefined, new Catalog([f]), undefined, 'value'))).toBe('validation_failed');
  });
});

describe('option values', () => {
  const single = field('SINGLE_CHOICE');
  const multi = field('MULTI_CHOICE');
  const other = field('SINGLE_CHOICE');
  const catalog = new Catalog([single, multi, other]);
  const [red, green, old] = single.options.map((o) => o.id);
  const [mRed, mGreen, mOld] = multi.options.map((o) => o.id);

  it('accepts active options of the field, ids in any case; multi values are stored sorted', () => {
    expect(validateValue(single, v('SINGLE_OPTION', red.toUpperCase()), catalog, undefined, 'value')).toBe(red);
    expect(validateValue(multi, v('MULTI_OPTION', [mGreen, mRed]), catalog, undefined, 'value')).toEqual([mRed, mGreen].sort());
  });
  it('answers option_not_found for an option of another field or none, invalid_uuid for a malformed id', () => {
    expect(errorOf(() => validateValue(single, v('SINGLE_OPTION', other.options[0].id), catalog, undefined, 'value'))).toMatchObject({ errorId: 'option_not_found', code: GrpcStatus.NOT_FOUND });
    expect(errorIdOf(() => validateValue(multi, v('MULTI_OPTION', [mRed, uuid(9999)]), catalog, undefined, 'value'))).toBe('option_not_found');
    expect(errorIdOf(() => validateValue(single, v('SINGLE_OPTION', 'red'), catalog, undefined, 'value'))).toBe('invalid_uuid');
  });
  it('refuses a newly selected inactive option, accepts one the subscriber already holds', () => {
    expect(errorOf(() => validateValue(single, v('SINGLE_OPTION', old), catalog, undefined, 'value'))).toMatchObject({ errorId: 'option_inactive', code: GrpcStatus.INVALID_ARGUMENT });
    expect(validateValue(single, v('SINGLE_OPTION', old), catalog, old, 'value')).toBe(old);
    expect(errorIdOf(() => validateValue(multi, v('MULTI_OPTION', [mRed, mOld]), catalog, [mRed], 'value'))).toBe('option_inactive');
    expect(validateValue(multi, v('MULTI_OPTION', [mRed, mOld]), catalog, [mOld], 'value')).toEqual([mRed, mOld].sort());
  });
  it('refuses empty and duplicate multi-option lists', () => {
    expect(errorIdOf(() => validateValue(multi, v('MULTI_OPTION', []), catalog, undefined, 'value'))).toBe('validation_failed');
    expect(errorIdOf(() => validateValue(multi, v('MULTI_OPTION', [mRed, mRed]), catalog, undefined, 'value'))).toBe('duplicate_ids');
    void green;
  });
  it('gives labels in the typed form and joins them for display', () => {
    expect(typedValue(multi, [mRed, mGreen], catalog)).toEqual({ kind: 'MULTI_OPTION', value: [mRed, mGreen], labels: ['Red', 'Green'] });
    const reversed = field('MULTI_CHOICE', {
      options: [
        { id: uuid(9002), label: 'First', position: 1, active: true },
        { id: uuid(9001), label: 'Second', position: 2, active: true },
      ],
    });
    const stored = [uuid(9001), uuid(9002)]; // sorted by id: Second, First
    expect(typedValue(reversed, stored, new Catalog([reversed])).labels).toEqual(['Second', 'First']);
    expect(displayValue(reversed, stored, new Catalog([reversed]))).toBe('Second, First'); // the labels' order
    expect(typedValue(single, red, catalog)).toEqual({ kind: 'SINGLE_OPTION', value: red, labels: ['Red'] });
    expect(displayValue(multi, [mRed, mGreen], catalog)).toBe('Red, Green');
    expect(displayValue(field('BOOLEAN'), true, catalog)).toBe('true');
    expect(displayValue(field('NUMBER'), 4.5, catalog)).toBe('4.5');
  });
});

describe('archived fields', () => {
  const archived = field('TEXT', { active: false });
  const catalog = new Catalog([archived]);
  it('take no new value (FAILED_PRECONDITION field_archived) but accept the stored one again', () => {
    expect(errorOf(() => validateValue(archived, v('TEXT', 'x'), catalog, undefined, 'value'))).toMatchObject({ errorId: 'field_archived', code: GrpcStatus.FAILED_PRECONDITION });
    expect(errorIdOf(() => validateValue(archived, v('TEXT', 'new'), catalog, 'old', 'value'))).toBe('field_archived');
    expect(validateValue(archived, v('TEXT', 'old'), catalog, 'old', 'value')).toBe('old');
  });
});

describe('validateFieldValues', () => {
  const text = field('TEXT');
  const num = field('NUMBER');
  const catalog = new Catalog([text, num]);
  it('validates a list into fieldId -> stored value', () => {
    expect(validateFieldValues([{ fieldId: text.id.toUpperCase(), value: v('TEXT', 'a') }, { fieldId: num.id, value: v('NUMBER', 1) }], catalog, {})).toEqual({ [text.id]: 'a', [num.id]: 1 });
  });
  it('answers field_not_found, duplicate_ids, invalid_uuid and refuses built-in names', () => {
    expect(errorOf(() => validateFieldValues([{ fieldId: uuid(4242), value: v('TEXT', 'a') }], catalog, {}))).toMatchObject({ errorId: 'field_not_found', code: GrpcStatus.NOT_FOUND });
    expect(errorIdOf(() => validateFieldValues([{ fieldId: text.id, value: v('TEXT', 'a') }, { fieldId: text.id, value: v('TEXT', 'b') }], catalog, {}))).toBe('duplicate_ids');
    expect(errorIdOf(() => validateFieldValues([{ fieldId: 'company', value: v('TEXT', 'a') }], catalog, {}))).toBe('invalid_uuid');
    expect(errorIdOf(() => validateFieldValues([{ fieldId: 'EMAIL', value: v('EMAIL', 'a@b.org') }], catalog, {}))).toBe('validation_failed');
  });
  it('names the failing entry in details', () => {
    expect(errorOf(() => validateFieldValues([{ fieldId: text.id, value: v('TEXT', 'a') }, { fieldId: num.id, value: v('TEXT', 'x') }], catalog, {}))?.details).toEqual([
      { path: 'fields[1].value', problem: 'kind must be NUMBER' },
    ]);
  });
});

describe('assertRequiredFields', () => {
  const required = field('TEXT', { required: true, personalizationTagName: 'company' });
  const requiredBool = field('BOOLEAN', { required: true, personalizationTagName: 'consent' });
  const archivedRequired = field('TEXT', { required: true, active: false });
  const catalog = new Catalog([required, requiredBool, archivedRequired, field('NUMBER')]);
  it('passes when every active required field has a value (false counts as a value)', () => {
    expect(() => assertRequiredFields(catalog, { [required.id]: 'x', [requiredBool.id]: false })).not.toThrow();
  });
  it('names every missing field', () => {
    expect(errorOf(() => assertRequiredFields(catalog, {}))).toMatchObject({
      errorId: 'required_field_missing',
      code: GrpcStatus.INVALID_ARGUMENT,
      details: [
        { path: `fields.${required.id}`, problem: 'required field company has no value' },
        { path: `fields.${requiredBool.id}`, problem: 'required field consent has no value' },
      ],
    });
  });
});
