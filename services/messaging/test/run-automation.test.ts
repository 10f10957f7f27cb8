// The run executor (app/run-automation.ts) on a real embedded store: a run interrupted by a peer not
// answering resumes at the step that failed and never repeats a finished one (no second message); a
// send whose step record was lost (a crash between the send and the record) is not sent again; a
// WAIT stops the run with its due time and tells the scheduler; a deleted automation cancels the run;
// SET_FIELD fromProperty converts to the field's kind or fails that step; IF_IN_SEGMENT tells TRUE,
// FALSE, UNKNOWN and a deleted segment apart and retries when the segment service does not answer. The peers (subscriber and
// segment services) are given as their answers; the real path is gateway/test/automation-runs.int.test.ts.
import { randomUUID } from 'node:crypto';
import { notFound, PeerUnavailable, Registry } from '@mailer/kit';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import type { Recipient } from '../src/mail/app/accept-message';
import { createEmailTemplate } from '../src/templates/app/email-templates';
import { publicLinks } from '../src/readers/app/public-links';
import { automationStepCounter, runAutomation, type RunAutomationDeps } from '../src/automations/app/run-automation';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { createSenderProfile } from '../src/templates/app/sender-profiles';
import type { SegmentTruth } from '../src/clients/segments';
import type { Step } from '../src/automations/domain/automation';
import { valueFromProperty } from '../src/automations/domain/run-steps';
import { automationRepository, type AutomationRepository } from '../src/automations/store/automations';
import { eventCollection } from '../src/automations/store/events';
import { messageCollections } from '../src/mail/store/messages';
import { outboxRepository } from '@mailer/nats';
import { runCollection, runsOf, type RunDoc } from '../src/automations/store/runs';
import { suppressionCollection } from '../src/readers/store/suppressions';

const A = '0193b6f0-0000-7000-8000-00000000000a';
const SUB = '0193b6f0-0000-7000-8000-0000000000b1';
const TAG = '0193b6f0-0000-7000-8000-0000000000c1';
let tmp: TempStore;
let deps: RunAutomationDeps;
let automations: AutomationRepository;
let calls: string[];
let tagFailures: number;
let waits: Date[];
let clock: number;
const links = publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] });
const ann: Recipient = { id: SUB, email: 'ann@example.org', firstName: 'Ann', fields: {}, status: 'ACTIVE' };

beforeEach(async () => {
  tmp = await openTempStore('runs');
  calls = [];
  tagFailures = 0;
  waits = [];
  clock = Date.parse('2026-01-01T10:00:00Z');
  automations = automationRepository(tmp.store);
  const now = () => new Date(clock);
  deps = {
    runs: runCollection(tmp.store),
    events: eventCollection(tmp.store),
    automations,
    accept: {
      store: tmp.store,
      messages: messageCollections(tmp.store),
      suppressions: suppressionCollection(tmp.store),
      outbox: outboxRepository(tmp.store),
      recipients: { recipientByEmail: async () => ann },
      links,
      domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }),
      now,
      newId: randomUUID,
      notify: () => undefined,
      awaitPublished: async () => true,
    },
    subscribers: {
      accountTopics: async () => [],
      readerTopics: async () => [],
      optOut: async () => undefined,
      replace: async () => undefined,
      customFields: async () => [{ id: 'f1', type: 'NUMBER', active: true, options: [] }],
      addTags: async (_a, _s, tagIds) => {
        if (tagFailures-- > 0) throw new PeerUnavailable('subscriber', 'service_unavailable', 'down', { code: 'UNAVAILABLE', details: 'test' });
        calls.push(`tag ${tagIds.join()}`);
      },
      removeTags: async () => undefined,
      setFieldValue: async (_a, _s, fieldId, value) => {
        calls.push(`field ${fieldId} ${JSON.stringify(value)}`);
      },
    },
    segments: { evaluateMember: async () => ({ result: 'TRUE', contactFound: true }) },
    now,
    onWaiting: (dueAt) => waits.push(dueAt),
  };
  const catalog = { store: tmp.store, now, newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) };
  await createSenderProfile(catalog, A, { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
  await createEmailTemplate(catalog, A, { name: 'welcome', subject: 'Hi', html: '<p>Hello {{ event.properties.plan }}</p>' });
});
afterEach(() => tmp.close());

async function startRun(steps: unknown[]): Promise<RunDoc> {
  const automationId = randomUUID();
  await automations.insert({ _id: automationId, accountId: A, name: 'x', trigger: { type: 'API_REQUEST', eventKey: 'k' }, entry: 'EVERY_EVENT', active: true, steps: steps as never, createdAt: new Date(clock) });
  const run: RunDoc = {
    _id: randomUUID(), accountId: A, automationId, eventId: randomUUID(), subscriberId: SUB, email: ann.email, status: 'RUNNING', stepIndex: 0,
    startedAt: new Date(clock), updatedAt: new Date(clock), dueAt: null, leaseUntil: null, steps: [], finishedAt: null,
  };
  await tmp.store.transaction((tx) => runsOf(deps.runs, A).insert([run], tx));
  return run;
}
const runOf = async (id: string) => (await runsOf(deps.runs, A).get(id))!;
const messageCount = () => deps.accept.messages.messages.countDocuments({ accountId: A });

it('a peer not answering: the job throws, the finished send stays recorded; the retry resumes at the tag step and sends nothing again', async () => {
  const run = await startRun([{ type: 'SEND_EMAIL', templateName: 'welcome', topicId: null }, { type: 'ADD_TAGS', tagIds: [TAG] }]);
  tagFailures = 1;
  await expect(runAutomation(deps, { accountId: A, runId: run._id })).rejects.toBeInstanceOf(PeerUnavailable);
  expect(await runOf(run._id)).toMatchObject({ status: 'RUNNING', stepIndex: 1, steps: [{ index: 0, type: 'SEND_EMAIL', outcome: 'DONE' }] });
  expect(await messageCount()).toBe(1);
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('COMPLETED');
  expect(await messageCount()).toBe(1);
  expect(calls).toEqual([`tag ${TAG}`]);
  expect((await runOf(run._id)).steps.map((s) => [s.index, s.outcome])).toEqual([[0, 'DONE'], [1, 'DONE']]);
  // a job delivered once more: nothing happens
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('ALREADY_ENDED');
  expect(await messageCount()).toBe(1);
  expect((await automations.get(A, run.automationId))!.stats).toEqual({ runsCompleted: 1 });
});

it('a send whose step record was lost (crash after the send) is not sent again: the step is DONE with the first message', async () => {
  const run = await startRun([{ type: 'SEND_EMAIL', templateName: 'welcome', topicId: null }]);
  await runAutomation(deps, { accountId: A, runId: run._id });
  const first = (await runOf(run._id)).steps[0].detail;
  // as if the process died between acceptMessage's commit and the step's record
  await deps.runs.updateOne({ _id: run._id }, { $set: { status: 'RUNNING', stepIndex: 0, steps: [] } });
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('COMPLETED');
  expect(await messageCount()).toBe(1);
  expect((await runOf(run._id)).steps[0]).toMatchObject({ outcome: 'DONE', detail: first });
});

it('WAIT stores the due time and stops; before it the job is NOT_DUE, after it the run goes on', async () => {
  const run = await startRun([{ type: 'WAIT', duration: 'PT30S' }, { type: 'ADD_TAGS', tagIds: [TAG] }]);
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('WAITING');
  const dueAt = new Date(clock + 30_000);
  expect(waits).toEqual([dueAt]);
  expect(await runOf(run._id)).toMatchObject({ status: 'WAITING', stepIndex: 0, dueAt, steps: [] });
  clock += 29_000;
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('NOT_DUE');
  expect(calls).toEqual([]);
  clock += 1_000;
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('COMPLETED');
  expect(await runOf(run._id)).toMatchObject({ status: 'COMPLETED', dueAt: null, steps: [{ type: 'WAIT', outcome: 'DONE' }, { type: 'ADD_TAGS', outcome: 'DONE' }] });
});

it('deleting the automation cancels its waiting run; a run whose automation is gone is CANCELLED', async () => {
  const run = await startRun([{ type: 'WAIT', duration: 'PT30S' }, { type: 'SEND_EMAIL', templateName: 'welcome', topicId: null }]);
  await runAutomation(deps, { accountId: A, runId: run._id });
  await automations.delete(A, run.automationId);
  expect(await runsOf(deps.runs, A).cancelUnfinished(run.automationId, new Date(clock))).toBe(1);
  clock += 60_000;
  expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('ALREADY_ENDED');
  expect(await runOf(run._id)).toMatchObject({ status: 'CANCELLED', dueAt: null });
  const orphan = await startRun([{ type: 'ADD_TAGS', tagIds: [TAG] }]);
  await automations.delete(A, orphan.automationId);
  expect(await runAutomation(deps, { accountId: A, runId: orphan._id })).toBe('CANCELLED');
  expect(await messageCount()).toBe(0);
});

it('IF_IN_SEGMENT: TRUE goes on; FALSE, UNKNOWN and a deleted segment end the run EXITED with their reason; no answer retries', async () => {
  const answers: Array<SegmentTruth | Error | { result: SegmentTruth; contactFound: boolean }> = [];
  deps.segments = {
    evaluateMember: async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return typeof next === 'string' ? { result: next, contactFound: true } : next;
    },
  };
  const steps = (): Step[] => [{ type: 'IF_IN_SEGMENT', segmentId: randomUUID() }, { type: 'ADD_TAGS', tagIds: [TAG] }];

  answers.push('TRUE');
  const yes = await startRun(steps());
  expect(await runAutomation(deps, { accountId: A, runId: yes._id })).toBe('COMPLETED');
  expect((await runOf(yes._id)).steps[0]).toMatchObject({ type: 'IF_IN_SEGMENT', outcome: 'DONE', detail: expect.stringMatching(/^IN_SEGMENT: /) });
  expect(calls).toEqual([`tag ${TAG}`]);
  calls.length = 0;

  for (const [answer, reason] of [['FALSE', 'NOT_IN_SEGMENT'], ['UNKNOWN', 'SEGMENT_UNKNOWN']] as const) {
    answers.push(answer);
    const run = await startRun(steps());
    expect(await runAutomation(deps, { accountId: A, runId: run._id })).toBe('EXITED');
    expect(await runOf(run._id)).toMatchObject({ status: 'EXITED', stepIndex: 1, steps: [{ type: 'IF_IN_SEGMENT', outcome: 'DONE', detail: expect.stringMatching(new RegExp(`^${reason}: `)) }] });
  }
  // the subscriber deleted since the run started: in no segment
  answers.push({ result: 'FALSE', contactFound: false });
  const deleted = await startRun(steps());
  expect(await runAutomation(deps, { accountId: A, runId: deleted._id })).toBe('EXITED');
  expect((await runOf(deleted._id)).steps[0].detail).toMatch(/^NOT_IN_SEGMENT: the subscriber no longer exists/);
  expect(calls).toEqual([]);

  // the segment service down, then answering: the job is retried and the step decided only then
  answers.push(new PeerUnavailable('segment', 'service_unavailable', 'down', { code: 'UNAVAILABLE', details: 'test' }), 'UNKNOWN');
  const later = await startRun(steps());
  await expect(runAutomation(deps, { accountId: A, runId: later._id })).rejects.toBeInstanceOf(PeerUnavailable);
  expect(await runOf(later._id)).toMatchObject({ status: 'RUNNING', stepIndex: 0, steps: [] });
  expect(await runAutomation(deps, { accountId: A, runId: later._id })).toBe('EXITED');
  expect((await runOf(later._id)).steps[0].detail).toMatch(/^SEGMENT_UNKNOWN: /);

  // the segment deleted since the automation was saved: FAILED, the run ends
  answers.push(notFound('segment_not_found', 'gone'));
  const gone = await startRun(steps());
  expect(await runAutomation(deps, { accountId: A, runId: gone._id })).toBe('EXITED');
  expect((await runOf(gone._id)).steps[0]).toMatchObject({ outcome: 'FAILED', detail: expect.stringMatching(/^SEGMENT_NOT_FOUND: /) });
  expect(calls).toEqual([]);
});

it('SET_FIELD fromProperty: converted to the field kind, or that step FAILED and the run goes on', async () => {
  expect(valueFromProperty({ order: { total: '12.5' } }, 'order.total', 'NUMBER')).toEqual({ value: { kind: 'NUMBER', number: 12.5 } });
  expect(valueFromProperty({ a: [{ b: true }] }, 'a.0.b', 'BOOLEAN')).toEqual({ value: { kind: 'BOOLEAN', booleanValue: true } });
  expect(valueFromProperty({ d: '2026-02-30' }, 'd', 'DATE')).toHaveProperty('problem');
  expect(valueFromProperty({ d: '2026-02-28T10:00:00Z' }, 'd', 'DATE')).toEqual({ value: { kind: 'DATE', date: '2026-02-28' } });
  expect(valueFromProperty({ n: 'abc' }, 'n', 'NUMBER')).toHaveProperty('problem');
  expect(valueFromProperty({}, 'toString', 'TEXT')).toHaveProperty('problem'); // own members only
  const run = await startRun([{ type: 'SET_FIELD', fieldId: 'f1', fromProperty: 'order.total' }, { type: 'ADD_TAGS', tagIds: [TAG] }]);
  // Counted for the dashboard: every outcome exported from the start, each recorded step once.
  const registry = new Registry();
  const steps = automationStepCounter(registry);
  const counts = async () => Object.fromEntries((await steps.get()).values.map((v) => [v.labels.outcome, v.value]));
  expect(await counts()).toEqual({ done: 0, skipped: 0, failed: 0 });
  expect(await runAutomation({ ...deps, stepOutcomes: steps }, { accountId: A, runId: run._id })).toBe('COMPLETED');
  expect((await runOf(run._id)).steps.map((s) => [s.type, s.outcome])).toEqual([['SET_FIELD', 'FAILED'], ['ADD_TAGS', 'DONE']]);
  expect(calls).toEqual([`tag ${TAG}`]);
  expect(await counts()).toEqual({ done: 1, skipped: 0, failed: 1 });
  expect(await runAutomation({ ...deps, stepOutcomes: steps }, { accountId: A, runId: run._id })).toBe('ALREADY_ENDED');
  expect(await counts()).toEqual({ done: 1, skipped: 0, failed: 1 });
});
