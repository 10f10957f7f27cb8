// The messaging service's field usages: SET_FIELD steps of automations are write usages that block
// archival; the handler -> use case -> repository path on a real embedded store.
import { commonV1 } from '@mailer/proto';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { setFieldUsages, type AutomationSteps } from '../src/automations/domain/automation-field-usage';
import { fieldUsageHandlers } from '../src/usages/handlers/field-usage';
import { AUTOMATIONS, automationRepository, automationSchema, type AutomationDoc } from '../src/automations/store/automations';

const FIELD = '5b0e8a2c-6d1f-4c3a-9e7b-2f4d6a8c0e1b';
const OTHER = '9c1d3e5f-7a2b-4c6d-8e0f-1a3b5c7d9e2f';

describe('setFieldUsages', () => {
  const automation = (over: Partial<AutomationSteps> = {}): AutomationSteps => ({
    id: 'a1',
    name: 'Welcome',
    active: true,
    steps: [{ type: 'SEND_EMAIL' }, { type: 'SET_FIELD', fieldId: FIELD }, { type: 'WAIT' }, { type: 'SET_FIELD', fieldId: OTHER }, { type: 'SET_FIELD', fieldId: FIELD.toUpperCase() }],
    ...over,
  });
  it('one blocking usage per SET_FIELD step on the field, active or not', () => {
    expect(setFieldUsages(automation(), FIELD).map((u) => [u.area, u.effect, u.permanentDeleteBlocking, u.status])).toEqual([
      ['steps[1]', 'BLOCKS_ARCHIVE', true, 'ACTIVE'],
      ['steps[4]', 'BLOCKS_ARCHIVE', true, 'ACTIVE'],
    ]);
    expect(setFieldUsages(automation({ active: false }), FIELD).map((u) => u.status)).toEqual(['INACTIVE', 'INACTIVE']);
  });
  it('other step types naming nothing, and other fields, are no usages', () => {
    expect(setFieldUsages(automation({ steps: [{ type: 'ADD_TAGS' }, { type: 'SET_FIELD', fieldId: OTHER }] }), FIELD)).toEqual([]);
  });
});

describe('ListFieldUsages on the embedded store', () => {
  let temp: TempStore;
  beforeAll(async () => {
    temp = await openTempStore('messaging-usage');
    const { store } = temp;
    const doc = (id: string, accountId: string, name: string, fieldId: string): AutomationDoc => ({ _id: id, accountId, name, active: true, steps: [{ type: 'WAIT', duration: 'P1D' }, { type: 'SET_FIELD', fieldId, value: 'x' }], createdAt: new Date() });
    await store.collection<AutomationDoc>(AUTOMATIONS, automationSchema).insertMany([
      doc('a-b', 'acc-1', 'B', FIELD),
      doc('a-a', 'acc-1', 'A', FIELD),
      doc('a-c', 'acc-1', 'C', OTHER),
      doc('a-x', 'acc-2', 'X', FIELD),
    ]);
  });
  afterAll(() => temp?.close());
  const list = (req: Partial<commonV1.ListFieldUsagesRequest>) =>
    fieldUsageHandlers({ automations: automationRepository(temp.store) }).listFieldUsages({ accountId: 'acc-1', fieldId: FIELD, personalizationTagName: 'company', ...req }, undefined as never);

  it("lists the account's automations setting the field, by name, as blocking AUTOMATION usages", async () => {
    const { usages } = await list({});
    expect(usages.map((u) => [u.artifactId, u.area, u.category, u.effect])).toEqual([
      ['a-a', 'steps[1]', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_AUTOMATION, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE],
      ['a-b', 'steps[1]', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_AUTOMATION, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE],
    ]);
  });

  it('another account or a built-in field (no id) has no usages; no account is validation_failed', async () => {
    expect((await list({ accountId: 'acc-3' })).usages).toEqual([]);
    expect((await list({ fieldId: '' })).usages).toEqual([]);
    await expect(list({ accountId: '' })).rejects.toMatchObject({ errorId: 'validation_failed' });
  });
});
