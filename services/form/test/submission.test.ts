// A public submission's values against its form (domain/submission.ts): every field type, required
// inputs, choices, unknown inputs and the body's shape, each problem at its input's path.
import { DomainError } from '@mailer/kit';
import { validateSubmission } from '../src/domain/submission';
import type { FieldType, FormField } from '../src/domain/form';
import { customInput, emailInput } from './support/form-fixture';

const input = (tag: string, fieldType: FieldType, over: Partial<FormField> = {}): FormField => ({
  ...customInput(`0190a1b2-c3d4-7e5f-8a9b-${String(tag.length).padStart(12, '0')}`, 1),
  personalizationTagName: tag,
  fieldType,
  ...over,
});
const form = {
  inputFields: [
    emailInput(),
    input('name', 'TEXT'),
    input('bio', 'LONG_TEXT'),
    input('age', 'NUMBER'),
    input('born', 'DATE'),
    input('agree', 'BOOLEAN', { isRequired: true }),
    input('plan', 'SINGLE_CHOICE', { optionValues: ['Free', 'Pro'] }),
    input('likes', 'MULTI_CHOICE', { optionValues: ['Tea', 'Coffee'] }),
  ],
};

function problems(body: unknown): Array<[string, string]> {
  try {
    validateSubmission(form, body);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    expect(err.errorId).toBe('validation_failed');
    return (err.details ?? []).map((d) => [d.path, d.problem]);
  }
  return [];
}

test('a valid submission: the address canonical, numbers from text, booleans from text, choices kept', () => {
  const out = validateSubmission(form, {
    values: { email: ' Ann@Example.ORG ', name: '<b>Ann</b>', age: '42', born: '1990-02-28', agree: 'true', plan: 'Pro', likes: ['Tea', 'Tea', 'Coffee'] },
    consent: { text: 'Yes please' },
  });
  expect(out).toEqual({
    email: 'ann@example.org',
    values: { email: 'ann@example.org', name: '<b>Ann</b>', age: 42, born: '1990-02-28', agree: true, plan: 'Pro', likes: ['Tea', 'Coffee'] },
    consent: { text: 'Yes please' },
  });
});

test('each bad value is reported at its input', () => {
  expect(problems({ values: { email: 'nope', agree: true, age: 'x', born: '2026-02-30', plan: 'Gold', likes: ['Milk'], name: 5, bio: 'x'.repeat(10_001) } }).map(([p]) => p).sort()).toEqual(
    ['values.age', 'values.bio', 'values.born', 'values.email', 'values.likes', 'values.name', 'values.plan'].sort(),
  );
});

test('required inputs: the address always, a required checkbox must be checked', () => {
  expect(problems({ values: {} })).toEqual([
    ['values.email', 'required'],
    ['values.agree', 'required'],
  ]);
  expect(problems({ values: { email: 'a@example.org', agree: false } })).toEqual([['values.agree', 'required']]);
  expect(problems({ values: { email: '  ', agree: true } })).toEqual([['values.email', 'required']]);
});

test('unknown inputs and members, and bodies that are not {values, consent?}', () => {
  expect(problems({ values: { email: 'a@example.org', agree: true, hack: 1 } })).toEqual([['values.hack', 'is not an input of this form']]);
  expect(problems({ values: { email: 'a@example.org', agree: true }, extra: 1 })).toEqual([['extra', 'unknown property']]);
  expect(problems({ values: { email: 'a@example.org', agree: true }, consent: { text: 'ok', by: 'me' } })).toEqual([['consent.by', 'unknown property']]);
  expect(problems(null)).toEqual([['', 'must be a JSON object']]);
  expect(problems({ values: [] })).toEqual([['values', 'must be an object']]);
  expect(problems({ values: { email: 'a@example.org', agree: true }, consent: 'yes' })).toEqual([['consent', 'must be an object {text}']]);
});
