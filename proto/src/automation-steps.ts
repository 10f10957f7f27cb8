// An automation step has one shape in the API (an object discriminated by `type`) and one in proto
// (a oneof per type). The gateway and the messaging service both convert here.
import type { AutomationStep as ProtoStep } from './gen/mailer/messaging/v1/automations';
import { fieldValueFromCase, fieldValueToCase, type FieldValue } from './values';

/**
 * A step as the API writes it. A SET_FIELD takes exactly one of `value` and `fromProperty`; that
 * rule is the messaging service's to check (with the step's path), so both members are optional here.
 */
export type AutomationStep =
  | { type: 'SEND_EMAIL'; templateName: string; topicId?: string | null }
  | { type: 'WAIT'; duration: string }
  | { type: 'ADD_TAGS' | 'REMOVE_TAGS'; tagIds: string[] }
  | { type: 'SET_FIELD'; fieldId: string; value?: FieldValue; fromProperty?: string }
  | { type: 'IF_IN_SEGMENT'; segmentId: string };

/** API step -> proto. A SET_FIELD with both sources sends the value (the caller refuses such a step first). */
export function automationStepToProto(s: AutomationStep): ProtoStep {
  switch (s.type) {
    case 'SEND_EMAIL':
      return { step: { $case: 'sendEmail', value: { templateName: s.templateName, topicId: s.topicId ?? undefined } } };
    case 'WAIT':
      return { step: { $case: 'wait', value: { duration: s.duration } } };
    case 'ADD_TAGS':
      return { step: { $case: 'addTags', value: { tagIds: s.tagIds } } };
    case 'REMOVE_TAGS':
      return { step: { $case: 'removeTags', value: { tagIds: s.tagIds } } };
    case 'SET_FIELD': {
      const source =
        s.value !== undefined
          ? { $case: 'value' as const, value: { value: fieldValueToCase(s.value) } }
          : s.fromProperty !== undefined
            ? { $case: 'fromProperty' as const, value: s.fromProperty }
            : undefined;
      return { step: { $case: 'setField', value: { fieldId: s.fieldId, source } } };
    }
    case 'IF_IN_SEGMENT':
      return { step: { $case: 'ifInSegment', value: { segmentId: s.segmentId } } };
  }
}

/** Proto step -> API step; undefined when the oneof is unset. A SET_FIELD value without a kind stays undefined. */
export function automationStepFromProto(p: ProtoStep): AutomationStep | undefined {
  const c = p.step;
  switch (c?.$case) {
    case 'sendEmail':
      return { type: 'SEND_EMAIL', templateName: c.value.templateName, topicId: c.value.topicId ?? null };
    case 'wait':
      return { type: 'WAIT', duration: c.value.duration };
    case 'addTags':
      return { type: 'ADD_TAGS', tagIds: c.value.tagIds };
    case 'removeTags':
      return { type: 'REMOVE_TAGS', tagIds: c.value.tagIds };
    case 'setField': {
      const source = c.value.source;
      if (source?.$case === 'fromProperty') return { type: 'SET_FIELD', fieldId: c.value.fieldId, fromProperty: source.value };
      if (source?.$case === 'value') return { type: 'SET_FIELD', fieldId: c.value.fieldId, value: fieldValueFromCase(source.value.value) };
      return { type: 'SET_FIELD', fieldId: c.value.fieldId };
    }
    case 'ifInSegment':
      return { type: 'IF_IN_SEGMENT', segmentId: c.value.segmentId };
    default:
      return undefined;
  }
}
