// The checks an automation passes before its ids are looked up (domain/automation.ts): WAIT
// durations, the step count, each step type's members, SET_FIELD values against their field.
import {
  automationProblems,
  normalizedStep,
  parseWaitDuration,
  setFieldProblems,
  waitDurationProblem,
  type AutomationInput,
  type FieldInfo,
  type StepInput,
} from '../src/automations/domain/automation';

const TAG = '5b0e8a2c-6d1f-4c3a-9e7b-2f4d6a8c0e1b';
const FIELD = '9c1d3e5f-7a2b-4c6d-8e0f-1a3b5c7d9e2f';
const OPT = '2e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b';
const OPT_OFF = '3e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b';

const input = (steps: StepInput[], over: Partial<AutomationInput> = {}): AutomationInput => ({
  name: 'Welcome',
  trigger: { type: 'API_REQUEST', eventKey: 'order.paid' },
  entry: 'EVERY_EVENT',
  steps,
  active: false,
  ...over,
});
const problemsOf = (steps: StepInput[], over: Partial<AutomationInput> = {}) => automationProblems(input(steps, over)).map((p) => [p.errorId, p.path]);

describe('WAIT durations', () => {
  it.each([
    ['PT1S', 1_000],
    ['PT30M', 1_800_000],
    ['P3D', 3 * 86_400_000],
    ['P1DT12H', 36 * 3_600_000],
    ['P2W', 14 * 86_400_000],
    ['P365D', 365 * 86_400_000],
    ['PT0S', 0],
  ])('%s is %i ms', (text, ms) => expect(parseWaitDuration(text)).toBe(ms));

  it.each(['', 'P', 'PT', 'P1DT', '1D', 'P1Y', 'P1M', 'PT1.5S', 'P-1D', 'p1d', 'P1D ', 'PT1H30', 'P1H', 'P1W1W'])('%j is not a duration', (text) => {
    expect(parseWaitDuration(text)).toBeNull();
    expect(waitDurationProblem(text)).toMatch(/ISO 8601/);
  });

  it('is refused outside PT1S .. P365D', () => {
    expect(waitDurationProblem('PT0S')).toMatch(/between PT1S and P365D/);
    expect(waitDurationProblem('P365DT1S')).toMatch(/between PT1S and P365D/);
    expect(waitDurationProblem('P53W')).toMatch(/between PT1S and P365D/);
    expect(waitDurationProblem('PT999999999H')).toMatch(/between PT1S and P365D/);
    expect(waitDurationProblem('P52W1D')).toBeNull();
    expect(waitDurationProblem('PT1S')).toBeNull();
  });
});

describe('automationProblems', () => {
  const wait: StepInput = { type: 'WAIT', duration: 'P1D' };

  it('a well-formed automation with every step type has none', () => {
    expect(
      problemsOf([
        { type: 'SEND_EMAIL', templateName: 'welcome', topicId: null },
        { type: 'SEND_EMAIL', templateName: 'welcome', topicId: TAG.toUpperCase() },
        wait,
        { type: 'ADD_TAGS', tagIds: [TAG] },
        { type: 'REMOVE_TAGS', tagIds: [TAG] },
        { type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'TEXT', text: 'x' } },
        { type: 'SET_FIELD', fieldId: FIELD, fromProperty: 'order.items.0.sku' },
        { type: 'IF_IN_SEGMENT', segmentId: TAG },
      ]),
    ).toEqual([]);
  });

  it('needs 1 to 50 steps', () => {
    expect(problemsOf([])).toEqual([['validation_failed', 'body.steps']]);
    expect(problemsOf(Array(50).fill(wait))).toEqual([]);
    expect(problemsOf(Array(51).fill(wait))).toEqual([['validation_failed', 'body.steps']]);
  });

  it('names the offending member of every step, with its errorId', () => {
    expect(
      problemsOf([
        { type: 'WAIT', duration: 'P1M' },
        { type: 'SEND_EMAIL', templateName: 'Bad Name', topicId: 'nope' },
        { type: 'ADD_TAGS', tagIds: [] },
        { type: 'REMOVE_TAGS', tagIds: [TAG, TAG.toUpperCase(), 'x'] },
        { type: 'SET_FIELD', fieldId: FIELD },
        { type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'TEXT', text: 'x' }, fromProperty: 'a' },
        { type: 'SET_FIELD', fieldId: 'f', fromProperty: 'a..b' },
        { type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'DATE', date: '2023-02-29' } },
        { type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'MULTI_OPTION', optionIds: [OPT, OPT] } },
        { type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'EMAIL', text: 'not-an-address' } },
        { type: 'IF_IN_SEGMENT', segmentId: '' },
        { type: 'UNSPECIFIED' },
        { type: 'WAIT', duration: 'P366D' },
      ]),
    ).toEqual([
      ['automation_wait_duration_invalid', 'body.steps[0].duration'],
      ['validation_failed', 'body.steps[1].templateName'],
      ['invalid_uuid', 'body.steps[1].topicId'],
      ['validation_failed', 'body.steps[2].tagIds'],
      ['invalid_uuid', 'body.steps[3].tagIds[2]'],
      ['duplicate_ids', 'body.steps[3].tagIds'],
      ['validation_failed', 'body.steps[4]'],
      ['validation_failed', 'body.steps[5]'],
      ['invalid_uuid', 'body.steps[6].fieldId'],
      ['validation_failed', 'body.steps[6].fromProperty'],
      ['validation_failed', 'body.steps[7].value.date'],
      ['duplicate_ids', 'body.steps[8].value.optionIds'],
      ['invalid_email', 'body.steps[9].value.text'],
      ['invalid_uuid', 'body.steps[10].segmentId'],
      ['validation_failed', 'body.steps[11].type'],
      ['automation_wait_duration_invalid', 'body.steps[12].duration'],
    ]);
  });

  it('checks name, trigger and entry', () => {
    expect(problemsOf([wait], { name: '  ', trigger: { type: 'UNSPECIFIED', eventKey: 'Order Paid' }, entry: 'SOMETIMES' as never })).toEqual([
      ['validation_failed', 'body.name'],
      ['validation_failed', 'body.trigger.type'],
      ['validation_failed', 'body.trigger.eventKey'],
      ['validation_failed', 'body.entry'],
    ]);
    expect(problemsOf([wait], { name: 'x'.repeat(201) })).toEqual([['validation_failed', 'body.name']]);
    // characters as the OpenAPI schema counts them (code points), not UTF-16 units
    expect(problemsOf([wait], { name: '😀'.repeat(200) })).toEqual([]);
  });
});

describe('setFieldProblems: the value against the field it writes', () => {
  const field = (over: Partial<FieldInfo> = {}): FieldInfo => ({ id: FIELD, type: 'SINGLE_CHOICE', active: true, options: [{ id: OPT, active: true }, { id: OPT_OFF, active: false }], ...over });
  const check = (step: Omit<Extract<StepInput, { type: 'SET_FIELD' }>, 'type' | 'fieldId'>, f: FieldInfo | undefined) =>
    setFieldProblems({ type: 'SET_FIELD', fieldId: FIELD, ...step }, f, 'body.steps[3]').map((p) => [p.errorId, p.path]);

  it('an unknown field is a missing reference; an archived one takes no value, from a property neither', () => {
    expect(check({ fromProperty: 'a' }, undefined)).toEqual([['automation_reference_not_found', 'body.steps[3].fieldId']]);
    expect(check({ fromProperty: 'a' }, field({ active: false }))).toEqual([['automation_field_archived', 'body.steps[3].fieldId']]);
    expect(check({ fromProperty: 'a' }, field())).toEqual([]);
  });

  it('the value kind must match the field type', () => {
    expect(check({ value: { kind: 'TEXT', text: 'x' } }, field({ type: 'LONG_TEXT' }))).toEqual([]);
    expect(check({ value: { kind: 'TEXT', text: 'x' } }, field({ type: 'NUMBER' }))).toEqual([['field_value_kind_mismatch', 'body.steps[3].value.kind']]);
    expect(check({ value: { kind: 'NUMBER', number: 1 } }, field({ type: 'NUMBER' }))).toEqual([]);
    // the subscriber service's limits: 10,000 characters for TEXT, 100,000 for LONG_TEXT
    expect(check({ value: { kind: 'TEXT', text: 'x'.repeat(10_001) } }, field({ type: 'TEXT' }))).toEqual([['validation_failed', 'body.steps[3].value.text']]);
    expect(check({ value: { kind: 'TEXT', text: 'x'.repeat(10_001) } }, field({ type: 'LONG_TEXT' }))).toEqual([]);
  });

  it('options must be active options of the field', () => {
    expect(check({ value: { kind: 'SINGLE_OPTION', optionId: OPT.toUpperCase() } }, field())).toEqual([]);
    expect(check({ value: { kind: 'SINGLE_OPTION', optionId: OPT_OFF } }, field())).toEqual([['option_inactive', 'body.steps[3].value.optionId']]);
    expect(check({ value: { kind: 'MULTI_OPTION', optionIds: [OPT, TAG] } }, field({ type: 'MULTI_CHOICE' }))).toEqual([
      ['automation_reference_not_found', 'body.steps[3].value.optionIds[1]'],
    ]);
  });
});

describe('normalizedStep', () => {
  it('lowercases ids and addresses, keeps the one source of a SET_FIELD', () => {
    expect(normalizedStep({ type: 'ADD_TAGS', tagIds: [TAG.toUpperCase()] })).toEqual({ type: 'ADD_TAGS', tagIds: [TAG] });
    expect(normalizedStep({ type: 'SEND_EMAIL', templateName: 'w', topicId: null })).toEqual({ type: 'SEND_EMAIL', templateName: 'w', topicId: null });
    expect(normalizedStep({ type: 'SET_FIELD', fieldId: FIELD.toUpperCase(), fromProperty: 'a.b' })).toEqual({ type: 'SET_FIELD', fieldId: FIELD, fromProperty: 'a.b' });
    expect(normalizedStep({ type: 'SET_FIELD', fieldId: FIELD, value: { kind: 'EMAIL', text: ' Ann@Example.ORG ' } })).toEqual({
      type: 'SET_FIELD',
      fieldId: FIELD,
      value: { kind: 'EMAIL', text: 'ann@example.org' },
    });
  });
});
