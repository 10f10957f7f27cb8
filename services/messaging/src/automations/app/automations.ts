// Use cases of automations (the API contract "Events and automations"): list, create, get, replace, delete,
// and their runs. Saving validates every step (domain/automation.ts), then checks every id a step
// names against the account: email templates here, tags, topics and fields at the subscriber
// service, segments at the segment service, each asked once per save and only when a step needs it.
// Refusals are 400 with every problem in `details` (the step's path) and the errorId of the first.
import { DomainError, GrpcStatus, notFound, type Problem } from '@mailer/kit';
import type { Collection, Store } from '@mailer/store';
import type { SubscriberCatalog } from '../../clients/subscribers';
import type { SegmentLookup } from '../../clients/segments';
import {
  automationProblems,
  ERRORS,
  normalizedStep,
  setFieldProblems,
  type AutomationInput,
  type AutomationProblem,
  type StepInput,
} from '../domain/automation';
import type { AutomationDoc, AutomationRepository } from '../store/automations';
import { emailTemplatesOf } from '../../templates/store/email-templates';
import { runsOf, type RunDoc, type RunStatus } from '../store/runs';

export interface AutomationDeps {
  store: Store;
  automations: AutomationRepository;
  runs: Collection<RunDoc>;
  catalog: SubscriberCatalog;
  segments: SegmentLookup;
  now: () => Date;
  newId: () => string;
}

export const automationNotFound = (id: string) => notFound('automation_not_found', `no automation with id ${id} exists in the account`);

export function listAutomations(deps: AutomationDeps, accountId: string): Promise<AutomationDoc[]> {
  return deps.automations.list(accountId);
}

export async function getAutomation(deps: AutomationDeps, accountId: string, id: string): Promise<AutomationDoc> {
  const found = await deps.automations.get(accountId, id.toLowerCase());
  if (!found) throw automationNotFound(id);
  return found;
}

export async function createAutomation(deps: AutomationDeps, accountId: string, input: AutomationInput): Promise<AutomationDoc> {
  const saved = await validated(deps, accountId, input);
  const now = deps.now();
  const doc: AutomationDoc = { _id: deps.newId(), accountId, ...saved, stats: { runsStarted: 0, runsCompleted: 0 }, createdAt: now, updatedAt: now };
  await deps.automations.insert(doc);
  return doc;
}

export async function updateAutomation(deps: AutomationDeps, accountId: string, id: string, input: AutomationInput): Promise<AutomationDoc> {
  await getAutomation(deps, accountId, id); // 404 before 400: a missing automation is the first thing to know
  const saved = await validated(deps, accountId, input);
  const updated = await deps.automations.replace(accountId, id.toLowerCase(), { ...saved, updatedAt: deps.now() });
  if (!updated) throw automationNotFound(id);
  return updated;
}

/**
 * Deleting it cancels its unfinished runs (the API contract): a waiting run never resumes, a run in work
 * stops before its next step (the executor finds the automation gone). Its runs stay listed
 * nowhere (the automation is gone) and go with the retention; its ONCE entries are kept.
 */
export async function deleteAutomation(deps: AutomationDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.automations.delete(accountId, id.toLowerCase()))) throw automationNotFound(id);
  await runsOf(deps.runs, accountId).cancelUnfinished(id.toLowerCase(), deps.now());
}

/** One page of the automation's runs, newest first (404 for an unknown automation). */
export async function listAutomationRuns(
  deps: AutomationDeps,
  accountId: string,
  id: string,
  q: { status?: RunStatus; pageNumber: number; pageSize: number },
): Promise<{ items: RunDoc[]; totalItems: number }> {
  const automation = await getAutomation(deps, accountId, id);
  return runsOf(deps.runs, accountId).list(automation._id, q);
}

type Saved = Pick<AutomationDoc, 'name' | 'trigger' | 'entry' | 'active' | 'steps'>;

/** The automation as stored, or a 400 with every problem found. */
async function validated(deps: AutomationDeps, accountId: string, input: AutomationInput): Promise<Saved> {
  const problems = automationProblems(input);
  // Ids are looked up only once the steps are well-formed (a malformed id names nothing to look up).
  if (problems.length === 0) problems.push(...(await referenceProblems(deps, accountId, input.steps)));
  if (problems.length) throw refusal(problems);
  return {
    name: input.name.trim(),
    trigger: { type: 'API_REQUEST', eventKey: input.trigger.eventKey },
    entry: input.entry,
    active: input.active,
    steps: input.steps.map(normalizedStep),
  };
}

function refusal(problems: AutomationProblem[]): DomainError {
  const [first] = problems;
  const details: Problem[] = problems.map(({ path, problem }) => ({ path, problem }));
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''}, see details)` : '';
  return new DomainError(GrpcStatus.INVALID_ARGUMENT, first.errorId, `${first.path}: ${first.problem}${more}`, details);
}

/** Every id a step names that the account does not have (and the fields' values that do not fit). */
async function referenceProblems(deps: AutomationDeps, accountId: string, steps: StepInput[]): Promise<AutomationProblem[]> {
  const has = (type: StepInput['type']) => steps.some((s) => s.type === type);
  const needsTags = has('ADD_TAGS') || has('REMOVE_TAGS');
  const needsTopics = steps.some((s) => s.type === 'SEND_EMAIL' && s.topicId !== null);
  const templates = emailTemplatesOf(deps.store, accountId);
  const templateNames = [...new Set(steps.flatMap((s) => (s.type === 'SEND_EMAIL' ? [s.templateName] : [])))];
  const segmentIds = [...new Set(steps.flatMap((s) => (s.type === 'IF_IN_SEGMENT' ? [s.segmentId.toLowerCase()] : [])))];
  // Independent lookups run together; each peer is asked at most once (segments once per distinct id).
  const [tagIds, topicIds, fields, existingTemplates, existingSegments] = await Promise.all([
    needsTags ? deps.catalog.tagIds(accountId) : new Set<string>(),
    needsTopics ? deps.catalog.topicIds(accountId) : new Set<string>(),
    has('SET_FIELD') ? deps.catalog.customFields(accountId) : [],
    Promise.all(templateNames.map(async (name) => ((await templates.get(name)) ? name : null))).then((names) => new Set(names.filter((n) => n !== null))),
    Promise.all(segmentIds.map(async (id) => ((await deps.segments.segmentExists(accountId, id)) ? id : null))).then((ids) => new Set(ids.filter((i) => i !== null))),
  ]);
  const problems: AutomationProblem[] = [];
  const missing = (path: string, what: string) => problems.push({ errorId: ERRORS.reference, path, problem: `no ${what} with this ${what === 'email template' ? 'name' : 'id'} exists in the account` });
  steps.forEach((step, i) => {
    const at = `body.steps[${i}]`;
    switch (step.type) {
      case 'SEND_EMAIL':
        if (!existingTemplates.has(step.templateName)) missing(`${at}.templateName`, 'email template');
        if (step.topicId !== null && !topicIds.has(step.topicId.toLowerCase())) missing(`${at}.topicId`, 'topic');
        break;
      case 'ADD_TAGS':
      case 'REMOVE_TAGS':
        step.tagIds.forEach((id, j) => {
          if (!tagIds.has(id.toLowerCase())) missing(`${at}.tagIds[${j}]`, 'tag');
        });
        break;
      case 'SET_FIELD':
        problems.push(...setFieldProblems(step, fields.find((f) => f.id === step.fieldId.toLowerCase()), at));
        break;
      case 'IF_IN_SEGMENT':
        if (!existingSegments.has(step.segmentId.toLowerCase())) missing(`${at}.segmentId`, 'segment');
        break;
    }
  });
  return problems;
}
