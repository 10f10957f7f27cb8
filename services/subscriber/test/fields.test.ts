import {
  Catalog,
  derivePersonalizationTagName,
  moveField,
  newFieldOptions,
  parseFieldRef,
  patchOptions,
  renumber,
  RESERVED_TAG_NAMES,
  validateFieldLabel,
  validatePersonalizationTagName,
} from '../src/domain/fields';
import { errorIdOf, field, uuid } from './helpers';

const none = new Set<string>();

describe('derivePersonalizationTagName', () => {
  it.each([
    ['Company', 'company'],
    ['  First   Order Date ', 'first_order_date'],
    ['Ünïcödé Çafé', 'unicode_cafe'],
    ['Größe', 'gro_e'],
    ['e-mail (work)', 'e_mail_work'],
    ['2nd phone', 'f_2nd_phone'],
    ['___', 'field'],
    ['日本語', 'field'],
    ['', 'field'],
    ['ÅNGSTRÖM', 'angstrom'],
    ['ﬁnance', 'finance'], // NFKD also unfolds ligatures
  ])('derives %p -> %p', (label, name) => expect(derivePersonalizationTagName(label, none)).toBe(name));

  it('always yields a valid tag name, even from a very long label', () => {
    const name = derivePersonalizationTagName('a'.repeat(300), none);
    expect(name).toHaveLength(64);
    expect(validatePersonalizationTagName(name)).toBe(name);
  });

  it('suffixes _2, _3 ... until the name is free in the account, the built-ins included', () => {
    expect(derivePersonalizationTagName('Email', RESERVED_TAG_NAMES)).toBe('email_2');
    expect(derivePersonalizationTagName('First name', RESERVED_TAG_NAMES)).toBe('first_name_2');
    expect(derivePersonalizationTagName('City', new Set(['city', 'city_2']))).toBe('city_3');
  });

  it('keeps suffixed names within 64 characters', () => {
    const base = 'b'.repeat(64);
    const name = derivePersonalizationTagName('b'.repeat(80), new Set([base]));
    expect(name).toBe(`${'b'.repeat(62)}_2`);
    expect(validatePersonalizationTagName(name)).toBe(name);
  });
});

describe('validatePersonalizationTagName', () => {
  it.each(['a', 'company', 'order_total_2', `a${'b'.repeat(63)}`])('accepts %p', (n) => expect(validatePersonalizationTagName(n)).toBe(n));
  it.each(['', 'A', 'Company', '_x', '1abc', 'with space', 'dash-ed', 'ümlaut', `a${'b'.repeat(64)}`])('refuses %p', (n) =>
    expect(errorIdOf(() => validatePersonalizationTagName(n))).toBe('invalid_personalization_tag_name'),
  );
});

describe('validateFieldLabel', () => {
  it('trims', () => expect(validateFieldLabel('  Plan ')).toBe('Plan'));
  it.each(['', '   ', 'x'.repeat(256)])('refuses %p', (l) => expect(errorIdOf(() => validateFieldLabel(l))).toBe('validation_failed'));
  it('accepts 255 characters', () => expect(validateFieldLabel('x'.repeat(255))).toHaveLength(255));
});

describe('parseFieldRef', () => {
  it('reads built-in names and custom ids', () => {
    expect(parseFieldRef('EMAIL')).toEqual({ builtIn: 'EMAIL' });
    expect(parseFieldRef('first_name')).toEqual({ builtIn: 'FIRST_NAME' });
    expect(parseFieldRef(uuid(7).toUpperCase())).toEqual({ id: uuid(7) });
  });
  it('refuses anything else with invalid_uuid', () => expect(errorIdOf(() => parseFieldRef('phone'))).toBe('invalid_uuid'));
});

describe('newFieldOptions', () => {
  let i = 0;
  const ids = () => `id-${++i}`;
  it('numbers the options of choice fields 1..n, all active', () => {
    expect(newFieldOptions('SINGLE_CHOICE', [' S ', 'M'], ids)).toEqual([
      { id: expect.any(String), label: 'S', position: 1, active: true },
      { id: expect.any(String), label: 'M', position: 2, active: true },
    ]);
  });
  it('requires options for choice types', () => {
    expect(errorIdOf(() => newFieldOptions('SINGLE_CHOICE', []))).toBe('field_options_required');
    expect(errorIdOf(() => newFieldOptions('MULTI_CHOICE', []))).toBe('field_options_required');
  });
  it.each(['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN'] as const)('refuses options on %s', (t) => {
    expect(errorIdOf(() => newFieldOptions(t, ['x']))).toBe('field_options_not_allowed');
    expect(newFieldOptions(t, [])).toEqual([]);
  });
  it('refuses duplicate labels (ignoring case and spaces), blank and long labels, and more than 500', () => {
    expect(errorIdOf(() => newFieldOptions('SINGLE_CHOICE', ['Red', ' red ']))).toBe('validation_failed');
    expect(errorIdOf(() => newFieldOptions('SINGLE_CHOICE', ['Red', ' ']))).toBe('validation_failed');
    expect(errorIdOf(() => newFieldOptions('SINGLE_CHOICE', ['x'.repeat(256)]))).toBe('validation_failed');
    expect(errorIdOf(() => newFieldOptions('MULTI_CHOICE', Array.from({ length: 501 }, (_, k) => `o${k}`)))).toBe('validation_failed');
    expect(newFieldOptions('MULTI_CHOICE', Array.from({ length: 500 }, (_, k) => `o${k}`))).toHaveLength(500);
  });
});

describe('patchOptions', () => {
  const [a, b, c] = [uuid(101), uuid(102), uuid(103)];
  const existing = [
    { id: a, label: 'A', position: 1, active: true },
    { id: b, label: 'B', position: 2, active: true },
    { id: c, label: 'C', position: 3, active: false },
  ];
  const fresh = () => 'new-option-id';

  it('relabels, reorders by list order, adds new ones, deactivates the omitted ones without deleting them', () => {
    const out = patchOptions('SINGLE_CHOICE', existing, [{ id: b, label: 'Bee', position: 0 }, { label: 'D', position: 0 }], fresh);
    expect(out).toEqual([
      { id: b, label: 'Bee', position: 1, active: true },
      { id: 'new-option-id', label: 'D', position: 2, active: true },
      { id: a, label: 'A', position: 3, active: false },
      { id: c, label: 'C', position: 4, active: false },
    ]);
  });
  it('reactivates a listed inactive option and follows given positions', () => {
    const out = patchOptions('MULTI_CHOICE', existing, [{ id: a, label: 'A', position: 2 }, { id: c, label: 'C', position: 1 }, { id: b, label: 'B', position: 3 }], fresh);
    expect(out.map((o) => [o.id, o.position, o.active])).toEqual([
      [c, 1, true],
      [a, 2, true],
      [b, 3, true],
    ]);
  });
  it('keeps an option sent back with active: false deactivated (a GET-then-PATCH round trip changes nothing)', () => {
    expect(patchOptions('SINGLE_CHOICE', existing, existing.map((o) => ({ ...o })), fresh)).toEqual(existing);
    const out = patchOptions('SINGLE_CHOICE', existing, [{ id: a, label: 'A', position: 1, active: false }, { id: b, label: 'B', position: 2, active: true }], fresh);
    expect(out.map((o) => [o.id, o.active])).toEqual([
      [a, false],
      [b, true],
      [c, false],
    ]);
  });
  it('needs at least one active option', () => {
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, [{ id: a, label: 'A', position: 1, active: false }]))).toBe('field_options_required');
  });
  it('answers option_not_found for an id of no option of this field, invalid_uuid and duplicate_ids for bad ids', () => {
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, [{ id: uuid(999), label: 'X', position: 0 }]))).toBe('option_not_found');
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, [{ id: 'nope', label: 'X', position: 0 }]))).toBe('invalid_uuid');
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, [{ id: a, label: 'X', position: 0 }, { id: a, label: 'Y', position: 0 }]))).toBe('duplicate_ids');
  });
  it('keeps labels unique across active and deactivated options', () => {
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, [{ id: a, label: 'A', position: 0 }, { label: 'c', position: 0 }]))).toBe('validation_failed');
  });
  it('needs at least one option on choice fields and none on others', () => {
    expect(errorIdOf(() => patchOptions('SINGLE_CHOICE', existing, []))).toBe('field_options_required');
    expect(errorIdOf(() => patchOptions('TEXT', [], [{ label: 'x', position: 0 }]))).toBe('field_options_not_allowed');
    expect(patchOptions('TEXT', [], [])).toEqual([]);
  });
});

describe('moveField and renumber', () => {
  const fields = [
    { id: 'a', position: 2 },
    { id: 'b', position: 3 },
    { id: 'c', position: 4 },
    { id: 'd', position: 5 },
  ];
  it('moves a field and renumbers the ones between', () => {
    expect(moveField(fields, 'd', 3)).toEqual(new Map([['d', 3], ['b', 4], ['c', 5]]));
    expect(moveField(fields, 'a', 5)).toEqual(new Map([['b', 2], ['c', 3], ['d', 4], ['a', 5]]));
    expect(moveField(fields, 'b', 3)).toEqual(new Map());
  });
  it('refuses positions of the built-ins and past the end', () => {
    expect(errorIdOf(() => moveField(fields, 'a', 1))).toBe('validation_failed');
    expect(errorIdOf(() => moveField(fields, 'a', 6))).toBe('validation_failed');
    expect(errorIdOf(() => moveField(fields, 'a', 2.5))).toBe('validation_failed');
  });
  it('closes gaps', () => expect(renumber([{ id: 'a', position: 2 }, { id: 'c', position: 4 }])).toEqual(new Map([['c', 3]])));
});

describe('Catalog', () => {
  it('requires active required fields only (an archived required field is not required)', () => {
    const req = field('TEXT', { required: true });
    const archived = field('TEXT', { required: true, active: false });
    expect(new Catalog([req, archived, field('NUMBER')]).requiredFields).toEqual([req]);
  });
});
