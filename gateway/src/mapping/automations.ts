import { protoEnum } from '@mailer/kit';
import { automationStepFromProto, automationStepToProto, automationsV1 } from '@mailer/proto';
import { ApiError } from '../errors';
import type { Schemas } from '../openapi/types';
import { canonicalFieldValue } from './field-values';
import { int64, present } from './numbers';

// Automations: API bodies (as validated by the OpenAPI document) <-> messaging service messages.
// Steps are a oneof per type in proto and a `type`-discriminated object in the API.

export const AutomationEntries = protoEnum(automationsV1.AutomationEntry, 'AUTOMATION_ENTRY_');
export const AutomationTriggerTypes = protoEnum(automationsV1.AutomationTriggerType, 'AUTOMATION_TRIGGER_TYPE_');
export const AutomationRunStatuses = protoEnum(automationsV1.AutomationRunStatus, 'AUTOMATION_RUN_STATUS_');

/** The API's step (the OpenAPI schema); passing it to and from `@mailer/proto`'s AutomationStep checks that both describe the same steps. */
type AutomationStepJson = Schemas['AutomationStep'];

export function stepToProto(s: AutomationStepJson, i: number): automationsV1.AutomationStep {
  if (s.type !== 'SET_FIELD') return automationStepToProto(s);
  // Neither source travels as none (the service refuses it with the step's path); both cannot travel at all.
  if (s.value !== undefined && s.fromProperty !== undefined) {
    throw new ApiError(400, 'validation_failed', `body.steps[${i}]: SET_FIELD takes exactly one of value and fromProperty`, [
      { path: `body.steps[${i}]`, problem: 'SET_FIELD takes exactly one of value and fromProperty' },
    ]);
  }
  return automationStepToProto(s.value === undefined ? s : { ...s, value: canonicalFieldValue(s.value) });
}

export function automationToProto(b: Schemas['AutomationRequest']): automationsV1.AutomationInput {
  return {
    name: b.name,
    trigger: { type: AutomationTriggerTypes.toProto(b.trigger.type), eventKey: b.trigger.eventKey },
    entry: AutomationEntries.toProto(b.entry),
    steps: b.steps.map((s, i) => stepToProto(s, i)),
    active: b.active,
  };
}

function stepJson(s: automationsV1.AutomationStep): AutomationStepJson {
  const step = automationStepFromProto(s);
  if (!step) throw new Error('the service answered an automation step without a type');
  return step;
}

/** Automation of the API contract. */
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

/** AutomationRun of the API contract. */
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
