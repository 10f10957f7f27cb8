import { automationsV1, automationStepFromProto, automationStepToProto, type AutomationStep } from '../src';

const EVERY_TYPE: AutomationStep[] = [
  { type: 'SEND_EMAIL', templateName: 'welcome', topicId: 'tp-1' },
  { type: 'SEND_EMAIL', templateName: 'welcome', topicId: null },
  { type: 'WAIT', duration: 'PT1H' },
  { type: 'ADD_TAGS', tagIds: ['t-1'] },
  { type: 'REMOVE_TAGS', tagIds: ['t-1', 't-2'] },
  { type: 'SET_FIELD', fieldId: 'f-1', value: { kind: 'MULTI_OPTION', optionIds: ['o-1'] } },
  { type: 'SET_FIELD', fieldId: 'f-1', fromProperty: 'order.total' },
  { type: 'IF_IN_SEGMENT', segmentId: 's-1' },
];

const overTheWire = (s: AutomationStep) => automationsV1.AutomationStep.decode(automationsV1.AutomationStep.encode(automationStepToProto(s)).finish());

describe('automation steps between the API shape and proto', () => {
  it.each(EVERY_TYPE)('$type survives the wire', (step) => expect(automationStepFromProto(overTheWire(step))).toEqual(step));

  it('a SET_FIELD without a source travels without one (the service names the missing source)', () => {
    expect(automationStepFromProto(overTheWire({ type: 'SET_FIELD', fieldId: 'f-1' }))).toEqual({ type: 'SET_FIELD', fieldId: 'f-1' });
  });

  it('a step without a type is no step', () => expect(automationStepFromProto(automationsV1.AutomationStep.decode(new Uint8Array()))).toBeUndefined());
});
