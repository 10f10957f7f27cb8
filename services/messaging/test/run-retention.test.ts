// Retention of automation runs (RUN_RETENTION_DAYS, default 90): a finished run goes once it finished
// longer ago than that (one declaration: MongoDB's TTL index, the embedded store's pruner, here with a
// 100 ms round), an unfinished run never goes, and the entry rule ONCE outlives the run that entered
// (its entry). Runs are started by the RecordEvent use case and ended through the runs repository
// under a clock set back 200 days; the pruner compares with the real time. Then the upgrade: runs an
// older build wrote (the ONCE entry as the run's onceKey, no finish time) are migrated at start.
import { waitFor } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import type { CustomEvent } from '@mailer/nats/facts';
import { outboxRepository } from '@mailer/nats';
import { recordEvent, type RecordEventDeps } from '../src/automations/app/record-event';
import { AUTOMATIONS, automationRepository, automationSchema } from '../src/automations/store/automations';
import { eventCollection } from '../src/automations/store/events';
import { migrateRuns } from '../src/automations/store/migrate-runs';
import { onceEntryCollection } from '../src/automations/store/once-entries';
import { runCollection, runsOf, type RunDoc } from '../src/automations/store/runs';

const ACCOUNT = 'acc-1';
const DAY = 86_400_000;
const SUBSCRIBERS: Record<string, string> = { 'ann@example.org': 'sub-ann', 'bob@example.org': 'sub-bob', 'cid@example.org': 'sub-cid' };

let temp: TempStore;
let clock: number;
let ids = 0;
let n = 0;

beforeEach(async () => {
  temp = await openTempStore('messaging-run-retention', { pruneIntervalMs: 100 });
  clock = Date.now() - 200 * DAY;
  const base = { accountId: ACCOUNT, name: 'A', active: true, steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date(clock) };
  await temp.store.collection(AUTOMATIONS, automationSchema).insertMany([
    { _id: 'once', trigger: { type: 'API_REQUEST', eventKey: 'visit' }, entry: 'ONCE', ...base },
    { _id: 'every', trigger: { type: 'API_REQUEST', eventKey: 'order' }, entry: 'EVERY_EVENT', ...base },
    { _id: 'deleted', trigger: { type: 'API_REQUEST', eventKey: 'cart' }, entry: 'EVERY_EVENT', ...base },
  ]);
});
afterEach(() => temp.close());

const runs = () => runCollection(temp.store); // the default retention, 90 days
const runsOfAccount = () => runsOf(runs(), ACCOUNT);
const at = (ms: number) => new Date(ms);

function deps(): RecordEventDeps {
  return {
    store: temp.store,
    events: eventCollection(temp.store),
    automations: automationRepository(temp.store),
    runs: runs(),
    onceEntries: onceEntryCollection(temp.store),
    newId: () => `run-${++ids}`,
    outbox: outboxRepository(temp.store),
    subscribers: {
      recipientByEmail: async (_accountId, email) => (SUBSCRIBERS[email] ? { id: SUBSCRIBERS[email], email, firstName: 'Ann', fields: {}, status: 'ACTIVE' } : null),
      subscriberIdsByEmail: async (_accountId, emails) => new Map(emails.filter((e) => SUBSCRIBERS[e]).map((e) => [e, SUBSCRIBERS[e]])),
    },
    consentSignup: async () => null,
    now: () => new Date(clock),
    notifyOutbox: () => undefined,
  };
}

/** Records an event of the key for the address now (the clock); answers its outcome and the run it started. */
async function send(eventKey: string, email = 'ann@example.org'): Promise<{ outcome: string; runId?: string }> {
  const event: CustomEvent = {
    eventId: `ev-${++n}`, accountId: ACCOUNT, eventKey, email, occurredAt: at(clock).toISOString(), triggerAutomations: true, properties: {}, consent: null,
    receivedAt: new Date().toISOString(), // (the event log keeps it: its own retention counts from receivedAt)
  };
  const result = await recordEvent(deps(), event);
  if (!result.recorded) throw new Error('not recorded');
  const [runId] = (await eventCollection(temp.store).findOne({ _id: event.eventId }))!.runIds;
  return { outcome: result.outcome, runId };
}

const runIds = async () => (await runs().find({ accountId: ACCOUNT }, { sort: { _id: 1 } })).map((r) => r._id);

it('a finished run goes RUN_RETENTION_DAYS after it finished (every way a run ends); an unfinished one, however old, stays', async () => {
  const [stepped, ended, waiting, running, recent] = await Promise.all(Array.from({ length: 5 }, () => send('order').then((s) => s.runId!)));
  const cancelled = (await send('cart')).runId!;
  const repo = runsOfAccount();
  // 200 days ago: the last step recorded, ended without a step, the automation deleted, a WAIT reached
  expect(await repo.finishStep(stepped, { index: 0, type: 'WAIT', outcome: 'DONE', at: at(clock), detail: null }, { status: 'COMPLETED', stepIndex: 1 }, at(clock))).toBe(true);
  expect(await repo.end(ended, 'EXITED', at(clock))).toBe(true);
  expect(await repo.cancelUnfinished('deleted', at(clock))).toBe(1);
  expect(await repo.startWaiting(waiting, 0, at(clock + DAY), at(clock))).toBe(true);
  // 80 days ago: finished, not yet past the retention
  const recentlyFinished = at(Date.now() - 80 * DAY);
  expect(await repo.end(recent, 'COMPLETED', recentlyFinished)).toBe(true);

  // the pruner's round that removes the three also found the others and left them
  await waitFor('the runs finished 200 days ago to go', async () => (await runs().countDocuments({ accountId: ACCOUNT })) === 3, 20_000);
  expect(await runIds()).toEqual([waiting, running, recent].sort());
  expect(await repo.get(waiting)).toMatchObject({ status: 'WAITING', finishedAt: null });
  expect(await repo.get(recent)).toMatchObject({ status: 'COMPLETED', finishedAt: recentlyFinished });
  expect((await runs().find({ _id: { $in: [stepped, ended, cancelled] } })).length).toBe(0);
});

it('ONCE: the entry outlives its pruned run, so the subscriber does not enter again; another subscriber does', async () => {
  const first = await send('visit');
  expect(first.outcome).toBe('RUNS_STARTED');
  expect(await runsOfAccount().end(first.runId!, 'COMPLETED', at(clock))).toBe(true);
  await waitFor('the finished ONCE run to go', async () => (await runsOfAccount().get(first.runId!)) === null, 20_000);

  clock = Date.now();
  expect(await send('visit')).toEqual({ outcome: 'NO_MATCHING_AUTOMATION', runId: undefined });
  expect((await send('visit', 'bob@example.org')).outcome).toBe('RUNS_STARTED');
  expect(await send('visit', 'bob@example.org')).toEqual({ outcome: 'NO_MATCHING_AUTOMATION', runId: undefined });
});

it('upgrade: runs of an older build get their ONCE entries and finish times at start (or go, past the retention); nobody enters again; later starts skip it', async () => {
  const now = Date.now();
  const old = (id: string, automationId: string, subscriberId: string, status: RunDoc['status'], updatedAt: number): RunDoc & { onceKey?: string } => ({
    _id: id, accountId: ACCOUNT, automationId, eventId: `ev-${id}`, subscriberId, email: 'x@example.org', status, stepIndex: 0,
    startedAt: at(updatedAt - DAY), updatedAt: at(updatedAt), dueAt: status === 'WAITING' ? at(now + DAY) : null, leaseUntil: null, steps: [], finishedAt: null,
    ...(automationId === 'once' ? { onceKey: `${automationId}:${subscriberId}` } : {}),
  });
  await runs().insertMany([
    old('ann-long-ago', 'once', 'sub-ann', 'COMPLETED', now - 199 * DAY),
    old('bob-waiting', 'once', 'sub-bob', 'WAITING', now - 199 * DAY),
    old('cid-lately', 'once', 'sub-cid', 'COMPLETED', now - 10 * DAY),
    old('every-long-ago', 'every', 'sub-ann', 'EXITED', now - 199 * DAY),
    old('every-lately', 'every', 'sub-ann', 'FAILED', now - 10 * DAY),
  ]);
  // as the older build stored them: no finish time at all
  await runs().updateMany({ accountId: ACCOUNT }, { $unset: { finishedAt: '' } });
  const migrate = () => migrateRuns(temp.store, runs(), onceEntryCollection(temp.store), { days: 90, now: at(now) });

  expect(await migrate()).toEqual({ found: 5 });
  // finished past the retention: gone; finished within it: dated by its last update; unfinished: kept as it was
  expect(await runIds()).toEqual(['bob-waiting', 'cid-lately', 'every-lately']);
  const kept = await runs().find({ accountId: ACCOUNT }, { sort: { _id: 1 } });
  expect(kept.map((r) => [r.finishedAt ?? null, r.onceKey])).toEqual([[null, undefined], [at(now - 10 * DAY), undefined], [at(now - 10 * DAY), undefined]]);

  clock = now;
  for (const email of ['ann@example.org', 'bob@example.org', 'cid@example.org']) expect(await send('visit', email)).toEqual({ outcome: 'NO_MATCHING_AUTOMATION', runId: undefined });
  expect((await send('order')).outcome).toBe('RUNS_STARTED');

  // the next start finds nothing left and records the migration done; the one after skips it
  expect(await migrate()).toEqual({ found: 0 });
  expect(await migrate()).toBeNull();
});
