import { subscriberV1, automationsV1, fieldValueFromCase, fieldValueToCase, kindOfCase, type FieldValue } from '../src';

const EVERY_KIND: FieldValue[] = [
  { kind: 'TEXT', text: 'Ann' },
  { kind: 'EMAIL', text: 'ann@example.org' },
  { kind: 'NUMBER', number: 2.5 },
  { kind: 'DATE', date: '2026-02-28' },
  { kind: 'BOOLEAN', booleanValue: false },
  { kind: 'SINGLE_OPTION', optionId: 'o-1' },
  { kind: 'MULTI_OPTION', optionIds: ['o-1', 'o-2'] },
];

describe('field values between the API shape and the proto oneof', () => {
  it.each(EVERY_KIND)('$kind survives the wire: API -> proto bytes -> API, in both messages that carry it', (value) => {
    const viaSubscriber = subscriberV1.FieldValue.decode(subscriberV1.FieldValue.encode({ value: fieldValueToCase(value), labels: [] }).finish());
    expect(fieldValueFromCase(viaSubscriber.value)).toEqual(value);
    const viaAutomation = automationsV1.AutomationFieldValue.decode(automationsV1.AutomationFieldValue.encode({ value: fieldValueToCase(value) }).finish());
    expect(fieldValueFromCase(viaAutomation.value)).toEqual(value);
  });

  it('writes each kind in its own proto case (EMAIL is not TEXT, false is a value)', () => {
    expect(EVERY_KIND.map((v) => fieldValueToCase(v).$case)).toEqual(['text', 'email', 'number', 'date', 'booleanValue', 'optionId', 'optionIds']);
    expect(kindOfCase({ $case: 'booleanValue', value: false })).toEqual({ kind: 'BOOLEAN', content: false });
  });

  it('an unset oneof is no value, not a guess', () => {
    expect(fieldValueFromCase(undefined)).toBeUndefined();
    expect(fieldValueFromCase(subscriberV1.FieldValue.decode(new Uint8Array()).value)).toBeUndefined();
  });
});
