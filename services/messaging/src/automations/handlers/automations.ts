// mailer.messaging.v1.AutomationService: the automations CRUD and their runs, translated to the use
// cases (app/automations.ts). Steps travel as a oneof per type; here they become the API's shape.
import { accountOf, type AsyncHandlers, invalid, pageAnswer, pageOf, protoEnum } from '@mailer/kit';
import { automationStepFromProto, automationStepToProto, automationsV1 } from '@mailer/proto';
import {
  createAutomation,
  deleteAutomation,
  getAutomation,
  listAutomationRuns,
  listAutomations,
  updateAutomation,
  type AutomationDeps,
} from '../app/automations';
import type { AutomationInput, EntryRule, FieldValue, Step, StepInput } from '../domain/automation';
import type { AutomationDoc } from '../store/automations';
import type { RunDoc, RunStatus } from '../store/runs';

const Entries = protoEnum(automationsV1.AutomationEntry, 'AUTOMATION_ENTRY_');
const TriggerTypes = protoEnum(automationsV1.AutomationTriggerType, 'AUTOMATION_TRIGGER_TYPE_');
const RunStatuses = protoEnum(automationsV1.AutomationRunStatus, 'AUTOMATION_RUN_STATUS_');

// ---- proto -> domain ---------------------------------------------------------------------------

export function stepFromProto(s: automationsV1.AutomationStep): StepInput {
  const step = automationStepFromProto(s);
  if (!step) return { type: 'UNSPECIFIED' };
  // A value without a kind is reported by the domain at `.value.kind`.
  if (step.type === 'SET_FIELD' && s.step?.$case === 'setField' && s.step.value.source?.$case === 'value' && !step.value) {
    return { ...step, value: { kind: 'UNSPECIFIED' } as unknown as FieldValue };
  }
  return step as StepInput;
}

export function automationInputFromProto(a: automationsV1.AutomationInput | undefined): AutomationInput {
  if (!a) throw invalid('validation_failed', 'the automation is required', [{ path: 'body', problem: 'is required' }]);
  return {
    name: a.name,
    trigger: { type: TriggerTypes.tryFromProto(a.trigger?.type ?? 0) ?? 'UNSPECIFIED', eventKey: a.trigger?.eventKey ?? '' },
    // proto3's "not given" is the API's default
    entry: (Entries.tryFromProto(a.entry) ?? (a.entry === 0 ? 'EVERY_EVENT' : 'UNKNOWN')) as EntryRule,
    steps: a.steps.map(stepFromProto),
    active: a.active,
  };
}

// ---- domain -> proto ---------------------------------------------------------------------------

export const stepToProto = (stored: AutomationDoc['steps'][number]): automationsV1.AutomationStep => automationStepToProto(stored as Step);

export function automationToProto(a: AutomationDoc): automationsV1.Automation {
  const createdAt = new Date(a.createdAt).toISOString();
  return {
    id: a._id,
    name: a.name,
    trigger: { type: TriggerTypes.toProto('API_REQUEST'), eventKey: a.trigger?.eventKey ?? '' },
    entry: Entries.toProto(a.entry ?? 'EVERY_EVENT'),
    steps: a.steps.map(stepToProto),
    active: a.active,
    createdAt,
    updatedAt: a.updatedAt ? new Date(a.updatedAt).toISOString() : createdAt,
    stats: { runsStarted: String(a.stats?.runsStarted ?? 0), runsCompleted: String(a.stats?.runsCompleted ?? 0) },
  };
}

export function runToProto(r: RunDoc): automationsV1.AutomationRun {
  return {
    runId: r._id,
    automationId: r.automationId,
    eventId: r.eventId,
    subscriberId: r.subscriberId,
    email: r.email,
    status: RunStatuses.toProto(r.status),
    stepIndex: r.stepIndex,
    startedAt: new Date(r.startedAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
    dueAt: r.dueAt ? new Date(r.dueAt).toISOString() : undefined,
    steps: r.steps.map((s) => ({ index: s.index, type: s.type, outcome: s.outcome, at: new Date(s.at).toISOString(), detail: s.detail ?? undefined })),
  };
}

export function automationHandlers(deps: AutomationDeps): AsyncHandlers<automationsV1.AutomationServiceServer> {
  return {
    async listAutomations(req) {
      return { items: (await listAutomations(deps, accountOf(req))).map(automationToProto) };
    },
    async createAutomation(req) {
      return { automation: automationToProto(await createAutomation(deps, accountOf(req), automationInputFromProto(req.automation))) };
    },
    async getAutomation(req) {
      return { automation: automationToProto(await getAutomation(deps, accountOf(req), req.automationId)) };
    },
    async updateAutomation(req) {
      return { automation: automationToProto(await updateAutomation(deps, accountOf(req), req.automationId, automationInputFromProto(req.automation))) };
    },
    async deleteAutomation(req) {
      await deleteAutomation(deps, accountOf(req), req.automationId);
      return {};
    },
    async listAutomationRuns(req) {
      const { pageNumber, pageSize } = pageOf(req.pageNumber, req.pageSize);
      const status = req.status ? RunStatuses.tryFromProto(req.status) : undefined;
      const { items, totalItems } = await listAutomationRuns(deps, accountOf(req), req.automationId, { status: status as RunStatus | undefined, pageNumber, pageSize });
      return { items: items.map(runToProto), ...pageAnswer({ pageNumber, pageSize }, totalItems) };
    },
  };
}
