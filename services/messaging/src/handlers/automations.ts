// mailer.messaging.v1.AutomationService: the automations CRUD and their runs, translated to the use
// cases (app/automations.ts). Steps travel as a oneof per type; here they become the API's shape.
import { accountOf, type AsyncHandlers, invalid, pageAnswer, pageOf, protoEnum } from '@mailer/kit';
import { automationsV1, fieldValueFromCase, fieldValueToCase } from '@mailer/proto';
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

// An unset value is reported by the domain at `.value.kind`.
const fieldValueFromProto = (v: automationsV1.AutomationFieldValue | undefined): FieldValue => fieldValueFromCase(v?.value) ?? ({ kind: 'UNSPECIFIED' } as unknown as FieldValue);

export function stepFromProto(s: automationsV1.AutomationStep): StepInput {
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
      const source = c.value.source;
      return {
        type: 'SET_FIELD',
        fieldId: c.value.fieldId,
        ...(source?.$case === 'value' ? { value: fieldValueFromProto(source.value) } : {}),
        ...(source?.$case === 'fromProperty' ? { fromProperty: source.value } : {}),
      };
    }
    case 'ifInSegment':
      return { type: 'IF_IN_SEGMENT', segmentId: c.value.segmentId };
    default:
      return { type: 'UNSPECIFIED' };
  }
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

const fieldValueToProto = (v: FieldValue): automationsV1.AutomationFieldValue => ({ value: fieldValueToCase(v) });

export function stepToProto(stored: AutomationDoc['steps'][number]): automationsV1.AutomationStep {
  const s = stored as Step;
  switch (s.type) {
    case 'SEND_EMAIL':
      return { step: { $case: 'sendEmail', value: { templateName: s.templateName, topicId: s.topicId ?? undefined } } };
    case 'WAIT':
      return { step: { $case: 'wait', value: { duration: s.duration } } };
    case 'ADD_TAGS':
      return { step: { $case: 'addTags', value: { tagIds: s.tagIds } } };
    case 'REMOVE_TAGS':
      return { step: { $case: 'removeTags', value: { tagIds: s.tagIds } } };
    case 'SET_FIELD':
      return {
        step: {
          $case: 'setField',
          value: { fieldId: s.fieldId, source: 'fromProperty' in s ? { $case: 'fromProperty', value: s.fromProperty } : { $case: 'value', value: fieldValueToProto(s.value) } },
        },
      };
    case 'IF_IN_SEGMENT':
      return { step: { $case: 'ifInSegment', value: { segmentId: s.segmentId } } };
    default:
      throw new Error(`stored automation step of unknown type ${(s as { type: string }).type}`);
  }
}

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
