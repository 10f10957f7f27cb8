// Automations as the API contract defines them ("Events and automations"): an API-request trigger on an event
// key, an entry rule, 1..50 steps. What can be checked without asking anyone is checked here; the
// ids a step names are checked against the account by app/automations.ts, with checkSetFieldStep
// for the field a SET_FIELD step writes. Every problem carries the errorId it is refused with and
// the request path of the offending member (`body.steps[2].duration`).
import type { Problem } from '@mailer/kit';
import { KIND_OF_FIELD_TYPE, type FieldTypeName, type FieldValue } from '@mailer/proto'; // the API's shapes, shared with the gateway

export const ENTRY_RULES = ['EVERY_EVENT', 'ONCE', 'ONE_AT_A_TIME'] as const;
export type EntryRule = (typeof ENTRY_RULES)[number];
export const STEP_TYPES = ['SEND_EMAIL', 'WAIT', 'ADD_TAGS', 'REMOVE_TAGS', 'SET_FIELD', 'IF_IN_SEGMENT'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const LIMITS = { name: 200, minSteps: 1, maxSteps: 50, tagIds: 1_000, optionIds: 500, text: 100_000, shortText: 10_000, propertyPath: 200 } as const;
export const EVENT_KEY = /^[a-z0-9][a-z0-9._-]{0,99}$/;
export const TEMPLATE_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** `a.b.0.c`: members of the event's properties (array items by index), split at dots. */
const PROPERTY_PATH = /^[^.\s]+(\.[^.\s]+)*$/;

/** A request field value: one shape for the API, the gateway and this service. */
export type { FieldValue };

export type Step =
  | { type: 'SEND_EMAIL'; templateName: string; topicId: string | null }
  | { type: 'WAIT'; duration: string }
  | { type: 'ADD_TAGS' | 'REMOVE_TAGS'; tagIds: string[] }
  | { type: 'SET_FIELD'; fieldId: string; value: FieldValue }
  | { type: 'SET_FIELD'; fieldId: string; fromProperty: string }
  | { type: 'IF_IN_SEGMENT'; segmentId: string };

/** A step as received: a SET_FIELD may carry both sources or neither, a type may be missing. */
export type StepInput =
  | Exclude<Step, { type: 'SET_FIELD' }>
  | { type: 'SET_FIELD'; fieldId: string; value?: FieldValue; fromProperty?: string }
  | { type: 'UNSPECIFIED' };

export interface AutomationInput {
  name: string;
  trigger: { type: 'API_REQUEST' | 'UNSPECIFIED'; eventKey: string };
  entry: EntryRule;
  steps: StepInput[];
  active: boolean;
}

/** A problem with the errorId it is refused with. */
export interface AutomationProblem extends Problem {
  errorId: string;
}

export const ERRORS = {
  invalid: 'validation_failed',
  uuid: 'invalid_uuid',
  duplicateIds: 'duplicate_ids',
  duration: 'automation_wait_duration_invalid',
  reference: 'automation_reference_not_found',
  fieldArchived: 'automation_field_archived',
  kindMismatch: 'field_value_kind_mismatch',
  optionInactive: 'option_inactive',
} as const;

// ---- WAIT durations --------------------------------------------------------------------------

export const MIN_WAIT_MS = 1_000;
export const MAX_WAIT_MS = 365 * 24 * 3600_000;
const DURATION = /^P(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$/;

/**
 * An ISO 8601 duration in weeks, days, hours, minutes and seconds (PT30M, P3D, P1DT12H, P2W), as
 * milliseconds; null when it is not one. Years and months are refused: their length depends on the
 * calendar, and a wait is a fixed time.
 */
export function parseWaitDuration(text: string): number | null {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return null;
  const [w, d, h, min, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  return ((((w * 7 + d) * 24 + h) * 60 + min) * 60 + s) * 1000;
}

/** Why a WAIT duration is refused, or null when it is fine. */
export function waitDurationProblem(text: string): string | null {
  const ms = parseWaitDuration(text);
  if (ms === null) return 'must be an ISO 8601 duration in weeks, days, hours, minutes and seconds, e.g. PT30M, P3D, P1DT12H (years and months are not accepted)';
  if (ms < MIN_WAIT_MS || ms > MAX_WAIT_MS) return 'must be between PT1S and P365D';
  return null;
}

// ---- the automation as a whole ---------------------------------------------------------------

/** Every problem of the input that needs nobody to be asked; empty when it may be saved as far as that goes. */
export function automationProblems(input: AutomationInput): AutomationProblem[] {
  const problems: AutomationProblem[] = [];
  const add = (errorId: string, path: string, problem: string) => problems.push({ errorId, path, problem });
  const name = input.name.trim();
  if (name.length === 0) add(ERRORS.invalid, 'body.name', 'must not be blank');
  else if ([...input.name].length > LIMITS.name) add(ERRORS.invalid, 'body.name', `must have at most ${LIMITS.name} characters`);
  if (input.trigger.type !== 'API_REQUEST') add(ERRORS.invalid, 'body.trigger.type', 'must be API_REQUEST');
  if (!EVENT_KEY.test(input.trigger.eventKey)) add(ERRORS.invalid, 'body.trigger.eventKey', `must match ${EVENT_KEY.source}`);
  if (!ENTRY_RULES.includes(input.entry)) add(ERRORS.invalid, 'body.entry', `must be one of ${ENTRY_RULES.join(', ')}`);
  if (input.steps.length < LIMITS.minSteps || input.steps.length > LIMITS.maxSteps) {
    add(ERRORS.invalid, 'body.steps', `must hold ${LIMITS.minSteps} to ${LIMITS.maxSteps} steps (it holds ${input.steps.length})`);
  }
  input.steps.slice(0, LIMITS.maxSteps).forEach((step, i) => problems.push(...stepProblems(step, `body.steps[${i}]`)));
  return problems;
}

function stepProblems(step: StepInput, at: string): AutomationProblem[] {
  const problems: AutomationProblem[] = [];
  const add = (errorId: string, path: string, problem: string) => problems.push({ errorId, path: `${at}${path}`, problem });
  const uuid = (path: string, id: string) => {
    if (!UUID.test(id)) add(ERRORS.uuid, path, 'must be a UUID');
  };
  const ids = (path: string, list: string[], max: number) => {
    if (list.length === 0 || list.length > max) add(ERRORS.invalid, path, `must hold 1 to ${max} ids`);
    list.forEach((id, j) => uuid(`${path}[${j}]`, id));
    if (new Set(list.map((id) => id.toLowerCase())).size !== list.length) add(ERRORS.duplicateIds, path, 'holds an id twice');
  };
  switch (step.type) {
    case 'SEND_EMAIL':
      if (!TEMPLATE_NAME.test(step.templateName)) add(ERRORS.invalid, '.templateName', `must match ${TEMPLATE_NAME.source}`);
      if (step.topicId !== null) uuid('.topicId', step.topicId);
      break;
    case 'WAIT': {
      const problem = waitDurationProblem(step.duration);
      if (problem) add(ERRORS.duration, '.duration', problem);
      break;
    }
    case 'ADD_TAGS':
    case 'REMOVE_TAGS':
      ids('.tagIds', step.tagIds, LIMITS.tagIds);
      break;
    case 'SET_FIELD':
      uuid('.fieldId', step.fieldId);
      if ((step.value === undefined) === (step.fromProperty === undefined)) add(ERRORS.invalid, '', 'SET_FIELD takes exactly one of value and fromProperty');
      if (step.fromProperty !== undefined && (step.fromProperty.length > LIMITS.propertyPath || !PROPERTY_PATH.test(step.fromProperty))) {
        add(ERRORS.invalid, '.fromProperty', `must be a path into the event's properties such as order.total (members split at dots, no blanks, at most ${LIMITS.propertyPath} characters)`);
      }
      if (step.value !== undefined) problems.push(...valueProblems(step.value, `${at}.value`));
      break;
    case 'IF_IN_SEGMENT':
      uuid('.segmentId', step.segmentId);
      break;
    default:
      add(ERRORS.invalid, '.type', `must be one of ${STEP_TYPES.join(', ')}`);
  }
  return problems;
}

function valueProblems(value: FieldValue, at: string): AutomationProblem[] {
  const problem = (path: string, text: string, errorId: string = ERRORS.invalid): AutomationProblem[] => [{ errorId, path: `${at}${path}`, problem: text }];
  switch (value.kind) {
    case 'TEXT':
      return value.text.length > LIMITS.text ? problem('.text', `must have at most ${LIMITS.text} characters`) : [];
    case 'EMAIL':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.text.trim()) && value.text.length <= 254 ? [] : problem('.text', 'must be an email address', 'invalid_email');
    case 'NUMBER':
      return Number.isFinite(value.number) ? [] : problem('.number', 'must be a finite number');
    case 'DATE':
      return isLocalDate(value.date) ? [] : problem('.date', 'must be an existing date written YYYY-MM-DD');
    case 'BOOLEAN':
      return [];
    case 'SINGLE_OPTION':
      return UUID.test(value.optionId) ? [] : problem('.optionId', 'must be a UUID', ERRORS.uuid);
    case 'MULTI_OPTION': {
      const out: AutomationProblem[] = [];
      if (value.optionIds.length === 0 || value.optionIds.length > LIMITS.optionIds) out.push(...problem('.optionIds', `must hold 1 to ${LIMITS.optionIds} ids`));
      value.optionIds.forEach((id, j) => {
        if (!UUID.test(id)) out.push(...problem(`.optionIds[${j}]`, 'must be a UUID', ERRORS.uuid));
      });
      if (new Set(value.optionIds.map((id) => id.toLowerCase())).size !== value.optionIds.length) out.push(...problem('.optionIds', 'holds an id twice', ERRORS.duplicateIds));
      return out;
    }
    default:
      return problem('.kind', 'must be one of TEXT, EMAIL, NUMBER, DATE, BOOLEAN, SINGLE_OPTION, MULTI_OPTION');
  }
}

function isLocalDate(text: string): boolean {
  const m = LOCAL_DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

// ---- the field of a SET_FIELD step -----------------------------------------------------------

export type FieldType = FieldTypeName;

/** A custom field of the account as the subscriber service describes it. */
export interface FieldInfo {
  id: string;
  type: FieldType;
  /** False once archived: archived fields take no new values. */
  active: boolean;
  /** How templates name the field (a broadcast's send window reads a zone from it). */
  personalizationTagName?: string;
  options: ReadonlyArray<{ id: string; active: boolean }>;
}

/** Problems of a SET_FIELD step with the field it names (undefined: the account has no such field). */
export function setFieldProblems(step: Extract<StepInput, { type: 'SET_FIELD' }>, field: FieldInfo | undefined, at: string): AutomationProblem[] {
  if (!field) return [{ errorId: ERRORS.reference, path: `${at}.fieldId`, problem: 'no custom field with this id exists in the account' }];
  if (!field.active) return [{ errorId: ERRORS.fieldArchived, path: `${at}.fieldId`, problem: 'the field is archived and takes no new values' }];
  const value = step.value;
  if (value === undefined) return [];
  const kind = KIND_OF_FIELD_TYPE[field.type];
  if (value.kind !== kind) return [{ errorId: ERRORS.kindMismatch, path: `${at}.value.kind`, problem: `a ${field.type} field takes ${kind} values` }];
  if (value.kind === 'TEXT' && field.type === 'TEXT' && value.text.length > LIMITS.shortText) {
    return [{ errorId: ERRORS.invalid, path: `${at}.value.text`, problem: `a TEXT field takes at most ${LIMITS.shortText} characters (LONG_TEXT: ${LIMITS.text})` }];
  }
  const chosen = value.kind === 'SINGLE_OPTION' ? [value.optionId] : value.kind === 'MULTI_OPTION' ? value.optionIds : [];
  const problems: AutomationProblem[] = [];
  chosen.forEach((id, j) => {
    const path = value.kind === 'SINGLE_OPTION' ? `${at}.value.optionId` : `${at}.value.optionIds[${j}]`;
    const option = field.options.find((o) => o.id === id.toLowerCase());
    if (!option) problems.push({ errorId: ERRORS.reference, path, problem: 'not an option of the field' });
    else if (!option.active) problems.push({ errorId: ERRORS.optionInactive, path, problem: 'the option is deactivated and cannot be chosen for a new value' });
  });
  return problems;
}

/** The step as stored and answered: ids lowercase, a SET_FIELD with its one source. */
export function normalizedStep(step: StepInput): Step {
  switch (step.type) {
    case 'SEND_EMAIL':
      return { type: step.type, templateName: step.templateName, topicId: step.topicId?.toLowerCase() ?? null };
    case 'ADD_TAGS':
    case 'REMOVE_TAGS':
      return { type: step.type, tagIds: step.tagIds.map((id) => id.toLowerCase()) };
    case 'SET_FIELD': {
      const fieldId = step.fieldId.toLowerCase();
      if (step.fromProperty !== undefined) return { type: 'SET_FIELD', fieldId, fromProperty: step.fromProperty };
      const v = step.value!;
      const value: FieldValue =
        v.kind === 'SINGLE_OPTION'
          ? { kind: v.kind, optionId: v.optionId.toLowerCase() }
          : v.kind === 'MULTI_OPTION'
            ? { kind: v.kind, optionIds: v.optionIds.map((id) => id.toLowerCase()) }
            : v.kind === 'EMAIL'
              ? { kind: v.kind, text: v.text.trim().toLowerCase() }
              : v;
      return { type: 'SET_FIELD', fieldId, value };
    }
    case 'IF_IN_SEGMENT':
      return { type: step.type, segmentId: step.segmentId.toLowerCase() };
    case 'WAIT':
      return step;
    default:
      throw new Error(`normalizedStep: a step of type ${step.type} was not validated`);
  }
}
