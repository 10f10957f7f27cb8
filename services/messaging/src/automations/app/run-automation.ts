// Use case RunAutomation: executes one run's steps in order from its first unfinished step (called by
// the automation-run job consumer and by the wait scheduler). Each step's outcome is persisted before
// the next step starts (a compare-and-set on stepIndex, store/runs.ts), so a redelivered job or a
// restart resumes at the first unfinished step and never repeats a finished one. The one step whose
// effect and record cannot commit together is SEND_EMAIL: it sends with the dedupe key
// automation-run:<runId>:<stepIndex>, so a send repeated after a crash (or by a second executor)
// answers the message stored the first time and queues nothing twice.
//
// A peer not answering (PeerUnavailable) or the store failing throws: the job is retried and the run
// resumes at the same step. Every other refusal is that step's FAILED outcome with the peer's message
// and the run goes on (the API contract: "a missing or unconvertible property fails that step").
import { DomainError, GrpcStatus, outcomeCounter, PeerUnavailable, type Logger, type Registry } from '@mailer/kit';
import { DocumentValidationError, type Collection } from '@mailer/store';
import type { SegmentMembership } from '../../clients/segments';
import type { SubscriberCatalog, SubscriberChanges, SubscriberTopics } from '../../clients/subscribers';
import { parseWaitDuration, type Step } from '../domain/automation';
import { valueFromProperty } from '../domain/run-steps';
import type { AutomationRepository } from '../store/automations';
import { eventsOf, type EventDoc } from '../store/events';
import { messagesOf } from '../../mail/store/messages';
import { FINAL_STATUSES, runsOf, type RunDoc, type RunStatus, type RunStepDoc, type StepOutcome } from '../store/runs';
import { suppressionsOf } from '../../readers/store/suppressions';
import { acceptMessage, type AcceptDeps } from '../../mail/app/accept-message';

export interface RunAutomationDeps {
  runs: Collection<RunDoc>;
  events: Collection<EventDoc>;
  automations: Pick<AutomationRepository, 'get' | 'countRuns'>;
  /** acceptMessage's dependencies. */
  accept: AcceptDeps;
  subscribers: SubscriberTopics & SubscriberChanges & Pick<SubscriberCatalog, 'customFields'>;
  segments: SegmentMembership;
  now: () => Date;
  /** Tells the wait scheduler a run waits until `dueAt`. */
  onWaiting: (dueAt: Date) => void;
  /** Counts each recorded step by outcome (automationStepCounter). Absent (unit tests): not counted. */
  stepOutcomes?: { inc(labels: { outcome: string }): void };
  logger?: Pick<Logger, 'warn' | 'debug'>;
}

export type RunResult = 'UNKNOWN_RUN' | 'ALREADY_ENDED' | 'NOT_DUE' | 'WAITING' | RunStatus | 'TAKEN_OVER';

/**
 * `messaging_automation_steps_total{outcome}`: automation steps recorded, by outcome (done, skipped,
 * failed), every outcome at 0 from the start. Failed steps are what an automation's owner must fix.
 */
export function automationStepCounter(registry: Registry) {
  return outcomeCounter(registry, {
    name: 'messaging_automation_steps_total',
    help: 'Automation run steps recorded, by outcome (done, skipped, failed: the step could not be carried out, the run goes on or ends)',
    label: 'outcome',
    values: ['done', 'skipped', 'failed'],
  });
}

/** The dedupe key of the message a SEND_EMAIL step sends: one message per run and step. */
export const sendDedupeKey = (runId: string, stepIndex: number) => `automation-run:${runId}:${stepIndex}`;

interface StepResult {
  outcome: StepOutcome;
  detail: string | null;
  /** The run ends here with this status (IF_IN_SEGMENT not TRUE: EXITED). */
  end?: RunStatus;
}

export async function runAutomation(deps: RunAutomationDeps, job: { accountId: string; runId: string }): Promise<RunResult> {
  const runs = runsOf(deps.runs, job.accountId);
  let run: RunDoc | null = await runs.get(job.runId);
  if (!run) return 'UNKNOWN_RUN';
  if (FINAL_STATUSES.includes(run.status)) return 'ALREADY_ENDED';
  if (run.status === 'WAITING' && run.dueAt && run.dueAt > deps.now()) return 'NOT_DUE';

  const automation = await deps.automations.get(job.accountId, run.automationId);
  if (!automation) {
    await runs.end(run._id, 'CANCELLED', deps.now());
    return 'CANCELLED';
  }
  const steps = automation.steps as Step[];
  const event = await eventsOf(deps.events, job.accountId).get(run.eventId);
  const properties = event ? (JSON.parse(event.propertiesJson) as Record<string, unknown>) : {};

  while (run.stepIndex < steps.length) {
    const index: number = run.stepIndex;
    const step = steps[index];
    let result: StepResult;
    if (step.type === 'WAIT') {
      if (run.status !== 'WAITING') {
        const dueAt = new Date(deps.now().getTime() + (parseWaitDuration(step.duration) ?? 0));
        if (!(await runs.startWaiting(run._id, index, dueAt, deps.now()))) return 'TAKEN_OVER';
        deps.onWaiting(dueAt);
        return 'WAITING';
      }
      result = { outcome: 'DONE', detail: `waited ${step.duration}` };
    } else {
      result = await executeStep(deps, run, step, index, properties, event);
    }
    const last = result.end !== undefined || index + 1 >= steps.length;
    const status: RunStatus = result.end ?? (last ? 'COMPLETED' : 'RUNNING');
    const record: RunStepDoc = { index, type: step.type, outcome: result.outcome, at: deps.now(), detail: result.detail };
    // the step's record and the automation's runsCompleted commit together
    const recorded = await deps.accept.store.transaction(async (tx) => {
      if (!(await runs.finishStep(run!._id, record, { status, stepIndex: index + 1 }, deps.now(), tx))) return false;
      if (status === 'COMPLETED') await deps.automations.countRuns(job.accountId, run!.automationId, { runsCompleted: 1 }, tx);
      return true;
    });
    if (!recorded) return 'TAKEN_OVER';
    deps.stepOutcomes?.inc({ outcome: result.outcome.toLowerCase() });
    if (last) return status;
    run = { ...run, status: 'RUNNING', stepIndex: index + 1 };
  }
  // An automation edited to fewer steps than the run had reached: nothing is left to do.
  if (await runs.end(run._id, 'COMPLETED', deps.now())) await deps.automations.countRuns(job.accountId, run.automationId, { runsCompleted: 1 });
  return 'COMPLETED';
}

/** A refusal of a peer that retrying cannot change (the step FAILED); anything else is rethrown. */
function refusal(err: unknown): string {
  if (err instanceof DomainError && !(err instanceof PeerUnavailable)) return `${err.errorId}: ${err.message}`;
  throw err;
}

async function executeStep(deps: RunAutomationDeps, run: RunDoc, step: Step, index: number, properties: Record<string, unknown>, event: EventDoc | null): Promise<StepResult> {
  const { accountId, subscriberId } = run;
  switch (step.type) {
    case 'SEND_EMAIL':
      return sendEmail(deps, run, step, index, properties, event);
    case 'ADD_TAGS':
    case 'REMOVE_TAGS':
      try {
        if (step.type === 'ADD_TAGS') await deps.subscribers.addTags(accountId, subscriberId, step.tagIds);
        else await deps.subscribers.removeTags(accountId, subscriberId, step.tagIds);
        return { outcome: 'DONE', detail: null };
      } catch (err) {
        return { outcome: 'FAILED', detail: refusal(err) };
      }
    case 'SET_FIELD': {
      let value;
      if ('fromProperty' in step) {
        const field = (await deps.subscribers.customFields(accountId)).find((f) => f.id === step.fieldId);
        if (!field) return { outcome: 'FAILED', detail: `the field ${step.fieldId} no longer exists` };
        const converted = valueFromProperty(properties, step.fromProperty, field.type);
        if ('problem' in converted) return { outcome: 'FAILED', detail: converted.problem };
        value = converted.value;
      } else value = step.value;
      try {
        await deps.subscribers.setFieldValue(accountId, subscriberId, step.fieldId, value);
        return { outcome: 'DONE', detail: null };
      } catch (err) {
        return { outcome: 'FAILED', detail: refusal(err) };
      }
    }
    case 'IF_IN_SEGMENT':
      return ifInSegment(deps, accountId, subscriberId, step.segmentId);
    default:
      return { outcome: 'FAILED', detail: `unknown step type ${(step as { type: string }).type}` };
  }
}

/**
 * IF_IN_SEGMENT (the API contract): continues only when the subscriber's segment result is TRUE; FALSE and
 * UNKNOWN end the run EXITED, the step's detail saying which (`IN_SEGMENT`, `NOT_IN_SEGMENT`,
 * `SEGMENT_UNKNOWN`; `SEGMENT_NOT_FOUND` for a segment deleted since the automation was saved). The
 * segment service not answering (or answering that its projection lags) throws: the job is retried
 * and the step runs again, so a run never takes a branch on a result nobody computed.
 */
async function ifInSegment(deps: RunAutomationDeps, accountId: string, subscriberId: string, segmentId: string): Promise<StepResult> {
  let answer;
  try {
    answer = await deps.segments.evaluateMember(accountId, segmentId, subscriberId);
  } catch (err) {
    if (err instanceof DomainError && !(err instanceof PeerUnavailable) && err.code === GrpcStatus.NOT_FOUND) {
      return { outcome: 'FAILED', detail: 'SEGMENT_NOT_FOUND: the segment no longer exists; the run ends', end: 'EXITED' };
    }
    throw err;
  }
  switch (answer.result) {
    case 'TRUE':
      return { outcome: 'DONE', detail: 'IN_SEGMENT: the segment is TRUE for the subscriber' };
    case 'FALSE':
      return {
        outcome: 'DONE',
        detail: answer.contactFound ? 'NOT_IN_SEGMENT: the segment is FALSE for the subscriber; the run ends' : 'NOT_IN_SEGMENT: the subscriber no longer exists; the run ends',
        end: 'EXITED',
      };
    case 'UNKNOWN':
      return { outcome: 'DONE', detail: 'SEGMENT_UNKNOWN: the segment is UNKNOWN for the subscriber (a value or fact it tests is missing); the run ends', end: 'EXITED' };
  }
}

/**
 * Marketing mail (the API contract): only to an ACTIVE subscriber, not suppressed, and (with a topic)
 * subscribed to the topic and not opted out of it; otherwise the step is SKIPPED with the reason.
 */
async function sendEmail(
  deps: RunAutomationDeps,
  run: RunDoc,
  step: Extract<Step, { type: 'SEND_EMAIL' }>,
  index: number,
  properties: Record<string, unknown>,
  event: EventDoc | null,
): Promise<StepResult> {
  const { accountId } = run;
  const dedupeKey = sendDedupeKey(run._id, index);
  // A send repeated after a crash (or by a second executor): the message is stored already, and was
  // sent whatever the subscriber's status is now.
  const sent = await messagesOf(deps.accept.messages, accountId).byDedupeKey(dedupeKey);
  if (sent) return { outcome: 'DONE', detail: `messageId ${sent._id}` };
  const recipient = await deps.accept.recipients.recipientByEmail(accountId, run.email);
  if (!recipient || recipient.id !== run.subscriberId) return { outcome: 'SKIPPED', detail: 'SUBSCRIBER_NOT_FOUND: the subscriber no longer exists' };
  if (recipient.status !== 'ACTIVE') return { outcome: 'SKIPPED', detail: `SUBSCRIBER_NOT_ACTIVE: the subscriber is ${recipient.status}` };
  const suppression = await suppressionsOf(deps.accept.suppressions, accountId).find(recipient.email);
  if (suppression) return { outcome: 'SKIPPED', detail: `SUPPRESSED: the address is suppressed (${suppression.reason})` };
  if (step.topicId) {
    const topic = (await deps.subscribers.readerTopics(accountId, recipient.id)).find((t) => t.topicId.toLowerCase() === step.topicId);
    if (!topic || topic.optedOut || !topic.subscribed) return { outcome: 'SKIPPED', detail: `OPTED_OUT: the subscriber is not subscribed to the topic ${step.topicId} or opted out of it` };
  }
  try {
    const accepted = await acceptMessage(
      // the automation job does not wait for the delivery job's PubAck: the outbox relay publishes it
      { ...deps.accept, awaitPublished: async () => true },
      {
        accountId,
        kind: 'AUTOMATION',
        templateName: step.templateName,
        email: recipient.email,
        topicId: step.topicId,
        subscriber: recipient,
        dedupeKey,
        event: { eventKey: event?.eventKey ?? null, occurredAt: event?.occurredAt.toISOString() ?? null, properties },
      },
    );
    if (accepted.status === 'SUPPRESSED') return { outcome: 'SKIPPED', detail: `SUPPRESSED: the address is suppressed (messageId ${accepted.messageId})` };
    return { outcome: 'DONE', detail: `messageId ${accepted.messageId}` };
  } catch (err) {
    // A rendered message the store refuses (e.g. a template whose text renders empty) never will be
    // stored: that step fails instead of the job retrying for a day.
    if (err instanceof DocumentValidationError) return { outcome: 'FAILED', detail: `the rendered message cannot be stored: ${err.message}` };
    return { outcome: 'FAILED', detail: refusal(err) };
  }
}
