import { protoEnum } from '@mailer/kit';
import { automationsV1 } from '@mailer/proto';
import { ApiError } from '../errors';
import { fieldValueRequestFromProto, protoCase, type FieldValueRequest } from './field-values';
import { int64, present } from './numbers';

// Automations: API bodies (as validated by the OpenAPI document) <-> messaging service messages.
// Steps are a oneof per type in proto and a `type`-discriminated object in the API.

export const AutomationEntries = protoEnum(automationsV1.AutomationEntry, 'AUTOMATION_ENTRY_');
export const AutomationTriggerTypes = protoEnum(automationsV1.AutomationTriggerType, 'AUTOMATION_TRIGGER_TYPE_');
export const AutomationRunStatuses = protoEnum(automationsV1.AutomationRunStatus, 'AUTOMATION_RUN_STATUS_');
type Entry = (typeof AutomationEntries.names)[number];
type RunStatus = (typeof AutomationRunStatuses.names)[number];

export type AutomationStepJson =
  | { type: 'SEND_EMAIL'; templateName: string; topicId?: string | null }
  | { type: 'WAIT'; duration: string }
  | { type: 'ADD_TAGS' | 'REMOVE_TAGS'; tagIds: string[] }
  | { type: 'SET_FIELD'; fieldId: string; value?: FieldValueRequest; fromProperty?: string }
  | { type: 'IF_IN_SEGMENT'; segmentId: string };

export interface AutomationBody {
  name: string;
  trigger: { type: 'API_REQUEST'; eventKey: string };
  entry: Entry; // defaulted by the validator
  steps: AutomationStepJson[];
  active: boolean; // defaulted by the validator
}

export interface ListAutomationRunsQuery {
  pageNumber: number;
  pageSize: number;
  status?: RunStatus;
}

export function stepToProto(s: AutomationStepJson, i: number): automationsV1.AutomationStep {
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
      // Neither source travels as none (the service refuses it with the step's path); both cannot travel at all.
      if (s.value !== undefined && s.fromProperty !== undefined) {
        throw new ApiError(400, 'validation_failed', `body.steps[${i}]: SET_FIELD takes exactly one of value and fromProperty`, [
          { path: `body.steps[${i}]`, problem: 'SET_FIELD takes exactly one of value and fromProperty' },
        ]);
      }
      const source =
        s.value !== undefined ? { $case: 'value' as const, value: { value: protoCase(s.value) } } : s.fromProperty !== undefined ? { $case: 'fromProperty' as const, value: s.fromProperty } : undefined;
      return { step: { $case: 'setField', value: { fieldId: s.fieldId, source } } };
    }
    case 'IF_IN_SEGMENT':
      return { step: { $case: 'ifInSegment', value: { segmentId: s.segmentId } } };
  }
}

export function automationToProto(b: AutomationBody): automationsV1.AutomationInput {
  return {
    name: b.name,
    trigger: { type: AutomationTriggerTypes.toProto(b.trigger.type), eventKey: b.trigger.eventKey },
    entry: AutomationEntries.toProto(b.entry),
    steps: b.steps.map((s, i) => stepToProto(s, i)),
    active: b.active,
  };
}

function stepJson(s: automationsV1.AutomationStep): AutomationStepJson {
  const c = s.step;
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
      const src = c.value.source;
      if (src?.$case === 'fromProperty') return { type: 'SET_FIELD', fieldId: c.value.fieldId, fromProperty: src.value };
      return { type: 'SET_FIELD', fieldId: c.value.fieldId, value: fieldValueRequestFromProto(src?.value) };
    }
    case 'ifInSegment':
      return { type: 'IF_IN_SEGMENT', segmentId: c.value.segmentId };
    default:
      throw new Error('the service answered an automation step without a type');
  }
}

/** Automation of API.md. */
export function automationJson(a: automationsV1.Automation) {
  return {
    id: a.id,
    name: a.name,
    trigger: { type: AutomationTriggerTypes.fromProto(present(a.trigger, 'the trigger').type), eventKey: a.trigger!.eventKey },
    entry: AutomationEntries.fromProto(a.entry),
    steps: a.steps.map(stepJson),
    active: a.active,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    stats: { runsStarted: int64(a.stats?.runsStarted), runsCompleted: int64(a.stats?.runsCompleted) },
  };
}

export const automationOf = (res: { automation?: automationsV1.Automation }) => automationJson(present(res.automation, 'the automation'));

/** AutomationRun of API.md. */
export function automationRunJson(r: automationsV1.AutomationRun) {
  return {
    runId: r.runId,
    automationId: r.automationId,
    eventId: r.eventId,
    subscriberId: r.subscriberId,
    email: r.email,
    status: AutomationRunStatuses.fromProto(r.status),
    stepIndex: r.stepIndex,
    startedAt: r.startedAt,
    updatedAt: r.updatedAt,
    dueAt: r.dueAt ?? null,
    steps: r.steps.map((s) => ({ index: s.index, type: s.type, outcome: s.outcome, at: s.at, detail: s.detail ?? null })),
  };
}

export function automationRunPageJson(page: automationsV1.ListAutomationRunsResponse) {
  return { items: page.items.map(automationRunJson), pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: int64(page.totalItems), totalPages: page.totalPages };
}
