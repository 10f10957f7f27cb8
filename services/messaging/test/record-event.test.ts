// The RecordEvent use case (and RecordEvents, its batch: one commit, same answers) on a real embedded store: once per eventId (sequential and concurrent
// deliveries), the event.received fact in the outbox with the record, the outcome rules wired to the
// automations store, and how subscriber-service answers are read (a refusal is "no subscriber", no
// answer is retried). The subscriber service is a port here (its own tests and the int tests cover it).
import { DomainError, GrpcStatus, PeerUnavailable } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxSchema, type OutboxDoc } from '@mailer/nats';
import type { CustomEvent } from '@mailer/nats/facts';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import type { Recipient, RecipientLookup } from '../src/mail/app/accept-message';
import { recordEvent, recordEvents, type ConsentSignup, type RecordEventDeps } from '../src/automations/app/record-event';
import { AUTOMATIONS, automationRepository, automationSchema } from '../src/automations/store/automations';
import { eventCollection } from '../src/automations/store/events';
import { outboxRepository } from '@mailer/nats';
import { onceEntryCollection } from '../src/automations/store/once-entries';
import { runCollection, runsOf } from '../src/automations/store/runs';

const ACCOUNT = 'acc-1';
const ANN: Recipient = { id: 'sub-ann', email: 'ann@example.org', firstName: 'Ann', fields: {}, status: 'ACTIVE' };

let temp: TempStore;
/** Addresses asked, one by one or in a batch call. */
let lookups = 0;
let lookup: RecipientLookup['recipientByEmail'];
/** The batch calls made: one account's addresses each. */
let batchCalls: Array<{ accountId: string; emails: string[] }> = [];

/** A port that signs nothing up (the form service's answer for a known address this event did not sign up). */
const noSignup: ConsentSignup = async () => null;

function deps(consentSignup: ConsentSignup = noSignup): RecordEventDeps {
  return {
    store: temp.store,
    events: eventCollection(temp.store),
    automations: automationRepository(temp.store),
    runs: runCollection(temp.store),
    onceEntries: onceEntryCollection(temp.store),
    newId: () => `run-${++ids}`,
    outbox: outboxRepository(temp.store),
    subscribers: {
      recipientByEmail: async (accountId, email) => {
        lookups++;
        return lookup(accountId, email);
      },
      // the service's answer to a list: each address's subscriber, or the call fails as a whole
      subscriberIdsByEmail: async (accountId, emails) => {
        batchCalls.push({ accountId, emails });
        const ids = new Map<string, string>();
        for (const email of emails) {
          lookups++;
          const found = await lookup(accountId, email);
          if (found) ids.set(email, found.id);
        }
        return ids;
      },
    },
    consentSignup,
    now: () => new Date('2024-03-01T12:00:01Z'),
    notifyOutbox: () => undefined,
  };
}

let n = 0;
let ids = 0;
const event = (over: Partial<CustomEvent> = {}): CustomEvent => ({
  eventId: `ev-${++n}`,
  accountId: ACCOUNT,
  eventKey: 'order.paid',
  email: 'ann@example.org',
  occurredAt: '2024-03-01T11:00:00.000Z',
  receivedAt: '2024-03-01T12:00:00.000Z',
  triggerAutomations: true,
  properties: { orderId: 'o-1' },
  consent: null,
  ...over,
});

/** Every fact in the outbox (those recorded together included), as {_id, subject, payload}. */
const outboxFacts = async () =>
  (await temp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).flatMap((d) => d.facts?.map((f) => ({ _id: f.id, subject: f.subject, payload: f.payload })) ?? [d]);
const factsOf = async (eventId: string) => (await outboxFacts()).filter((d) => (d.payload as { eventId?: string }).eventId === eventId);

beforeEach(async () => {
  temp = await openTempStore('messaging-record-event');
  lookups = 0;
  batchCalls = [];
  lookup = async (_accountId, email) => (email === ANN.email ? ANN : null);
});
afterEach(() => temp.close());

describe('recordEvent', () => {
  it('records the event and its event.received fact together; a second delivery changes nothing and asks nobody', async () => {
    const e = event();
    expect(await recordEvent(deps(), e)).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    const [fact] = await factsOf(e.eventId);
    expect(fact).toMatchObject({ _id: `event.received:${e.eventId}`, subject: 'domain.event.received' });
    expect(fact.payload).toEqual({
      type: 'event.received',
      accountId: ACCOUNT,
      occurredAt: e.occurredAt,
      eventId: e.eventId,
      eventKey: 'order.paid',
      email: 'ann@example.org',
      receivedAt: e.receivedAt,
      properties: { orderId: 'o-1' },
      triggerAutomations: true,
      subscriberId: ANN.id,
      outcome: 'NO_MATCHING_AUTOMATION',
      runIds: [],
      consentDecision: null,
    });
    expect(lookups).toBe(1);
    expect(await recordEvent(deps(), { ...e, properties: { other: true } })).toEqual({ recorded: false });
    expect(lookups).toBe(1);
    expect(await factsOf(e.eventId)).toHaveLength(1);
    expect(JSON.parse((await eventCollection(temp.store).findOne({ _id: e.eventId }))!.propertiesJson)).toEqual({ orderId: 'o-1' });
  });

  it('concurrent deliveries of one event record it once, with one fact', async () => {
    const e = event();
    const results = await Promise.all(Array.from({ length: 8 }, () => recordEvent(deps(), e)));
    expect(results.filter((r) => r.recorded)).toHaveLength(1);
    expect(await eventCollection(temp.store).countDocuments({ _id: e.eventId })).toBe(1);
    expect(await factsOf(e.eventId)).toHaveLength(1);
  });

  it('RUNS_STARTED when an active automation of the account has the key: its run, runsStarted and the run job commit with the event', async () => {
    const automations = temp.store.collection(AUTOMATIONS, automationSchema);
    const base = { name: 'A', steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date(), entry: 'EVERY_EVENT' };
    await automations.insertMany([
      { _id: 'on', accountId: ACCOUNT, active: true, trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, ...base },
      { _id: 'off', accountId: ACCOUNT, active: false, trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, ...base },
      { _id: 'foreign', accountId: 'acc-2', active: true, trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, ...base },
    ]);
    const e = event();
    expect(await recordEvent(deps(), e)).toEqual({ recorded: true, outcome: 'RUNS_STARTED' });
    const recorded = (await eventCollection(temp.store).findOne({ _id: e.eventId }))!;
    expect(recorded).toMatchObject({ outcome: 'RUNS_STARTED', runIds: [expect.any(String)], matchedAutomationIds: ['on'] });
    const [runId] = recorded.runIds;
    expect(await runsOf(runCollection(temp.store), ACCOUNT).get(runId)).toMatchObject({ automationId: 'on', eventId: e.eventId, subscriberId: ANN.id, status: 'RUNNING', stepIndex: 0, steps: [] });
    expect((await automations.findOne({ _id: 'on' }))!.stats).toEqual({ runsStarted: 1 });
    const jobs = (await temp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).filter((o) => o.subject.startsWith('jobs.'));
    expect(jobs).toEqual([expect.objectContaining({ subject: `jobs.automation-run.${ACCOUNT}`, payload: { accountId: ACCOUNT, runId } })]);
    expect(await recordEvent(deps(), event({ eventKey: 'cart.left' }))).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect(await recordEvent(deps(), event({ triggerAutomations: false }))).toEqual({ recorded: true, outcome: 'NOT_TRIGGERED' });
  });

  it('entry rules: ONCE never starts a second run for the subscriber; ONE_AT_A_TIME not while one is unfinished', async () => {
    const automations = temp.store.collection(AUTOMATIONS, automationSchema);
    const base = { accountId: ACCOUNT, name: 'A', active: true, steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date() };
    await automations.insertMany([
      { _id: 'once', trigger: { type: 'API_REQUEST', eventKey: 'visit' }, entry: 'ONCE', ...base },
      { _id: 'one', trigger: { type: 'API_REQUEST', eventKey: 'cart' }, entry: 'ONE_AT_A_TIME', ...base },
    ]);
    const runs = runsOf(runCollection(temp.store), ACCOUNT);
    const runIdsOf = async (eventId: string) => (await eventCollection(temp.store).findOne({ _id: eventId }))!.runIds;
    const first = event({ eventKey: 'visit' });
    expect(await recordEvent(deps(), first)).toEqual({ recorded: true, outcome: 'RUNS_STARTED' });
    await runs.end((await runIdsOf(first.eventId))[0], 'COMPLETED', new Date());
    expect(await recordEvent(deps(), event({ eventKey: 'visit' }))).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    const cart = event({ eventKey: 'cart' });
    expect(await recordEvent(deps(), cart)).toEqual({ recorded: true, outcome: 'RUNS_STARTED' });
    expect(await recordEvent(deps(), event({ eventKey: 'cart' }))).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    await runs.end((await runIdsOf(cart.eventId))[0], 'COMPLETED', new Date());
    expect(await recordEvent(deps(), event({ eventKey: 'cart' }))).toEqual({ recorded: true, outcome: 'RUNS_STARTED' });
  });

  it('two events of one subscriber racing past an entry rule start one run: the other is thrown (retried) and then finds the run', async () => {
    await temp.store.collection(AUTOMATIONS, automationSchema).insertOne({
      _id: 'once', accountId: ACCOUNT, name: 'A', active: true, steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date(), trigger: { type: 'API_REQUEST', eventKey: 'visit' }, entry: 'ONCE',
    });
    const [a, b] = [event({ eventKey: 'visit' }), event({ eventKey: 'visit' })];
    const results = await Promise.allSettled([recordEvent(deps(), a), recordEvent(deps(), b)]);
    const started = results.filter((r) => r.status === 'fulfilled' && (r.value as { outcome?: string }).outcome === 'RUNS_STARTED');
    expect(started).toHaveLength(1);
    // the loser (if it lost inside the transaction) is retried as NATS would redeliver it
    for (const [i, r] of results.entries()) if (r.status === 'rejected') expect(await recordEvent(deps(), [a, b][i])).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect(await runCollection(temp.store).countDocuments({ automationId: 'once' })).toBe(1);
  });

  it('an unknown address is NO_SUBSCRIBER; with consent the signup port decides (SUBSCRIBER_CREATED), asked with the eventId', async () => {
    const asked: unknown[] = [];
    let answer: Awaited<ReturnType<ConsentSignup>> = null;
    const signup: ConsentSignup = async (input) => {
      asked.push(input);
      return answer;
    };
    expect(await recordEvent(deps(signup), event({ email: 'new@example.org' }))).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });
    expect(asked).toEqual([]); // no consent: nobody is asked
    const consent = { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' };
    expect(await recordEvent(deps(signup), event({ email: 'new@example.org', consent }))).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });

    answer = { decision: 'QUEUED', subscriberId: 'sub-new', subscriberStatus: 'UNCONFIRMED' };
    asked.length = 0;
    const e = event({ email: 'new@example.org', consent });
    expect(await recordEvent(deps(signup), e)).toEqual({ recorded: true, outcome: 'SUBSCRIBER_CREATED' });
    expect(asked).toEqual([{ accountId: ACCOUNT, email: 'new@example.org', consent, eventId: e.eventId, subscriberKnown: false }]);
    expect(await eventCollection(temp.store).findOne({ _id: e.eventId })).toMatchObject({
      subscriberId: 'sub-new',
      consentDecision: 'QUEUED',
      consent: { source: 'checkout', givenAt: new Date(consent.givenAt) },
      runIds: [],
    });
    // The fact carries the decision too: a webhook receiver learns the reader must still confirm.
    expect((await factsOf(e.eventId))[0].payload).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', subscriberId: 'sub-new', consentDecision: 'QUEUED' });

    // a suppressed address: decided, no subscriber
    answer = { decision: 'SUPPRESSED_SUBSCRIBER_POLICY', subscriberId: null, subscriberStatus: null };
    const s = event({ email: 'gone@example.org', consent });
    expect(await recordEvent(deps(signup), s)).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });
    expect(await eventCollection(temp.store).findOne({ _id: s.eventId })).toMatchObject({ subscriberId: null, consentDecision: 'SUPPRESSED_SUBSCRIBER_POLICY' });
  });

  it('a consent signup starts no automation run (UNCONFIRMED); a known address with consent asks with subscriberKnown and runs as usual', async () => {
    await temp.store.collection(AUTOMATIONS, automationSchema).insertMany([
      { _id: 'on', accountId: ACCOUNT, active: true, trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, name: 'A', steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date(), entry: 'EVERY_EVENT' },
    ]);
    const consent = { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' };
    const asked: Array<{ subscriberKnown: boolean }> = [];
    const created: ConsentSignup = async (input) => {
      asked.push(input);
      return input.subscriberKnown ? null : { decision: 'QUEUED', subscriberId: 'sub-new', subscriberStatus: 'UNCONFIRMED' };
    };
    expect(await recordEvent(deps(created), event({ email: 'new@example.org', consent }))).toEqual({ recorded: true, outcome: 'SUBSCRIBER_CREATED' });
    expect(await recordEvent(deps(created), event({ consent }))).toEqual({ recorded: true, outcome: 'RUNS_STARTED' });
    expect(asked.map((a) => a.subscriberKnown)).toEqual([false, true]);
    // a redelivery whose first try signed the address up: the lookup finds the new subscriber, the port answers that signup
    lookup = async () => ({ ...ANN, id: 'sub-new', email: 'new@example.org', status: 'UNCONFIRMED' });
    const again: ConsentSignup = async () => ({ decision: 'QUEUED', subscriberId: 'sub-new', subscriberStatus: 'UNCONFIRMED' });
    expect(await recordEvent(deps(again), event({ email: 'new@example.org', consent }))).toEqual({ recorded: true, outcome: 'SUBSCRIBER_CREATED' });
    // one run in all: ANN's
    expect(await runCollection(temp.store).find({})).toEqual([expect.objectContaining({ subscriberId: ANN.id })]);
  });

  it('the form service refusing the consent signup is no subscriber; not answering is thrown', async () => {
    const consent = { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' };
    const refusing: ConsentSignup = async () => {
      throw new DomainError(GrpcStatus.INVALID_ARGUMENT, 'invalid_email', 'not an address');
    };
    expect(await recordEvent(deps(refusing), event({ email: 'new@example.org', consent }))).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });
    const down: ConsentSignup = async () => {
      throw new PeerUnavailable('form', 'service_unavailable', 'The form service is unavailable.', { code: 'UNAVAILABLE', details: '' });
    };
    const e = event({ email: 'new@example.org', consent });
    await expect(recordEvent(deps(down), e)).rejects.toBeInstanceOf(PeerUnavailable);
    expect(await eventCollection(temp.store).findOne({ _id: e.eventId })).toBeNull();
  });

  it('the subscriber service refusing the address is no subscriber; not answering is thrown (the event is retried) and records nothing', async () => {
    lookup = async () => {
      throw new DomainError(GrpcStatus.INVALID_ARGUMENT, 'invalid_email', 'not an address');
    };
    expect(await recordEvent(deps(), event())).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });
    lookup = async () => {
      throw new PeerUnavailable('subscriber', 'service_unavailable', 'The subscriber service is unavailable; retry later.', { code: 'UNAVAILABLE', details: '' });
    };
    const e = event();
    await expect(recordEvent(deps(), e)).rejects.toBeInstanceOf(PeerUnavailable);
    expect(await eventCollection(temp.store).countDocuments({ _id: e.eventId })).toBe(0);
    expect(await factsOf(e.eventId)).toHaveLength(0);
    lookup = async () => ANN;
    expect(await recordEvent(deps(), e)).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
  });
});

describe('recordEvents (a batch)', () => {
  const commits = () => temp.store.stats!().commits;
  const once = (id: string) => ({ _id: id, accountId: ACCOUNT, name: 'A', active: true, steps: [{ type: 'WAIT', duration: 'P1D' }], createdAt: new Date(), trigger: { type: 'API_REQUEST', eventKey: 'visit' }, entry: 'ONCE' });

  it('records a batch in one commit, each event with its fact and outcome, one lookup per address', async () => {
    await temp.store.collection(AUTOMATIONS, automationSchema).insertOne({ ...once('every'), entry: 'EVERY_EVENT', trigger: { type: 'API_REQUEST', eventKey: 'order.paid' } });
    const batch = [event(), event(), event({ email: 'new@example.org' }), event({ eventKey: 'cart.left' }), event({ accountId: 'acc-2' })];
    const before = commits();
    expect(await recordEvents(deps(), batch)).toEqual([
      { recorded: true, outcome: 'RUNS_STARTED' },
      { recorded: true, outcome: 'RUNS_STARTED' },
      { recorded: true, outcome: 'NO_SUBSCRIBER' },
      { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' },
      { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' },
    ]);
    expect(commits() - before).toBe(1);
    expect(lookups).toBe(3); // ann of acc-1, new@, ann of acc-2
    for (const e of batch) expect(await factsOf(e.eventId)).toEqual([expect.objectContaining({ _id: `event.received:${e.eventId}` })]);
    const runs = await runCollection(temp.store).find({});
    expect(runs.map((r) => r.eventId).sort()).toEqual([batch[0].eventId, batch[1].eventId].sort());
    expect((await temp.store.collection(AUTOMATIONS, automationSchema).findOne({ _id: 'every' }))!.stats).toEqual({ runsStarted: 2 });
    expect((await outboxFacts()).filter((f) => f.subject.startsWith('jobs.'))).toHaveLength(2);
    expect((await eventCollection(temp.store).findOne({ _id: batch[4].eventId }))!.accountId).toBe('acc-2');
  });

  it('a redelivered batch, or an event twice in one, records nothing twice and asks nobody again', async () => {
    const [a, b] = [event(), event()];
    expect(await recordEvents(deps(), [a, a])).toEqual([{ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' }, { recorded: false }]);
    const asked = lookups;
    const before = commits();
    expect(await recordEvents(deps(), [a, b, a])).toEqual([{ recorded: false }, { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' }, { recorded: false }]);
    expect(lookups).toBe(asked + 1);
    expect(commits() - before).toBe(1);
    expect(await recordEvents(deps(), [a, b])).toEqual([{ recorded: false }, { recorded: false }]);
    expect(commits() - before).toBe(1);
    expect(await eventCollection(temp.store).countDocuments({})).toBe(2);
    expect(await outboxFacts()).toHaveLength(2);
  });

  it('concurrent deliveries of overlapping batches record each event once', async () => {
    const events = Array.from({ length: 6 }, () => event());
    const results = await Promise.all([recordEvents(deps(), events.slice(0, 4)), recordEvents(deps(), events.slice(2)), recordEvents(deps(), events)]);
    for (const e of events) {
      const recorded = results.flatMap((rs, k) => rs.filter((r, i) => 'recorded' in r && r.recorded && [events.slice(0, 4), events.slice(2), events][k][i] === e));
      expect(recorded).toHaveLength(1);
    }
    expect(await eventCollection(temp.store).countDocuments({})).toBe(6);
    expect(await outboxFacts()).toHaveLength(6);
  });

  it('two events of one subscriber in a batch meet an entry rule as they would one after the other', async () => {
    await temp.store.collection(AUTOMATIONS, automationSchema).insertOne(once('once'));
    const [a, b] = [event({ eventKey: 'visit' }), event({ eventKey: 'visit' })];
    expect(await recordEvents(deps(), [a, b])).toEqual([{ recorded: true, outcome: 'RUNS_STARTED' }, { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' }]);
    expect(await runCollection(temp.store).countDocuments({ automationId: 'once' })).toBe(1);
    expect(await outboxFacts()).toHaveLength(3); // two events, one run job
  });

  it("an event whose subscriber lookup gets no answer is that event's error; the others are recorded", async () => {
    lookup = async (_accountId, email) => {
      if (email === 'down@example.org') throw new PeerUnavailable('subscriber', 'service_unavailable', 'The subscriber service is unavailable; retry later.', { code: 'UNAVAILABLE', details: '' });
      return email === ANN.email ? ANN : null;
    };
    const batch = [event(), event({ email: 'down@example.org' }), event()];
    const results = await recordEvents(deps(), batch);
    expect(results[0]).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect((results[1] as { error: unknown }).error).toBeInstanceOf(PeerUnavailable);
    expect(results[2]).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect(await eventCollection(temp.store).countDocuments({ _id: batch[1].eventId })).toBe(0);
    // its redelivery, once the service answers
    lookup = async () => null;
    expect(await recordEvents(deps(), [batch[1]])).toEqual([{ recorded: true, outcome: 'NO_SUBSCRIBER' }]);
  });

  it('an event the store refuses is that event\'s error: the others of its batch are recorded, and not again when the batch comes back', async () => {
    // (the event record requires an eventKey: a store-side refusal that no parse catches upstream here)
    const batch = [event(), event({ eventKey: '' }), event()];
    const results = await recordEvents(deps(), batch);
    expect(results[0]).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect(results[1]).toEqual({ error: expect.any(Error) });
    expect(results[2]).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' });
    expect(await eventCollection(temp.store).countDocuments({})).toBe(2);
    // the consumer retries the refused one; a redelivery of the whole batch redoes nothing
    const again = await recordEvents(deps(), batch);
    expect([again[0], again[2]]).toEqual([{ recorded: false }, { recorded: false }]);
    expect(again[1]).toEqual({ error: expect.any(Error) });
    expect((await outboxFacts()).map((f) => f._id).sort()).toEqual([`event.received:${batch[0].eventId}`, `event.received:${batch[2].eventId}`].sort());
  });

  it('asks for the subscribers of a batch in one call per account, every address once; events with consent ask on their own', async () => {
    const consent = { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' };
    const batch = [
      ...Array.from({ length: 30 }, (_, i) => event({ email: `reader${i % 10}@example.org` })),
      event(),
      event({ accountId: 'acc-2', email: 'reader1@example.org' }),
      event({ email: 'new@example.org', consent }),
    ];
    const asked: string[] = [];
    lookup = async (accountId, email) => (asked.push(`${accountId} ${email}`), email === ANN.email ? ANN : null);
    const results = await recordEvents(deps(), batch);
    expect(results.filter((r) => 'recorded' in r && r.recorded)).toHaveLength(batch.length);
    expect(batchCalls.map((c) => ({ accountId: c.accountId, emails: [...c.emails].sort() }))).toEqual([
      { accountId: ACCOUNT, emails: [...Array.from({ length: 10 }, (_, i) => `reader${i}@example.org`), ANN.email].sort() },
      { accountId: 'acc-2', emails: ['reader1@example.org'] },
    ]);
    expect(asked.filter((a) => a.endsWith('new@example.org'))).toEqual([`${ACCOUNT} new@example.org`]); // on its own
    expect(results[30]).toEqual({ recorded: true, outcome: 'NO_MATCHING_AUTOMATION' }); // ann, answered from the batch
    expect(results[0]).toEqual({ recorded: true, outcome: 'NO_SUBSCRIBER' });
  });

  it('a batch call that fails leaves each address to ask on its own: a refused one has no subscriber, the others their answer', async () => {
    lookup = async (_accountId, email) => {
      if (email === 'bad@') throw new DomainError(GrpcStatus.INVALID_ARGUMENT, 'invalid_email', 'not an address');
      return email === ANN.email ? ANN : null;
    };
    const batch = [event(), event({ email: 'bad@' }), event({ email: 'new@example.org' }), event()];
    expect(await recordEvents(deps(), batch)).toEqual([
      { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' },
      { recorded: true, outcome: 'NO_SUBSCRIBER' },
      { recorded: true, outcome: 'NO_SUBSCRIBER' },
      { recorded: true, outcome: 'NO_MATCHING_AUTOMATION' },
    ]);
    expect(batchCalls).toHaveLength(1);
    expect((await eventCollection(temp.store).findOne({ _id: batch[0].eventId }))!.subscriberId).toBe(ANN.id);
  });

  it('an event with consent is never answered from the lookups of the batch (it may sign its address up)', async () => {
    const consent = { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' };
    const signup: ConsentSignup = async () => ({ decision: 'QUEUED', subscriberId: 'sub-new', subscriberStatus: 'UNCONFIRMED' });
    const batch = [event({ email: 'new@example.org', consent }), event({ email: 'new@example.org', consent }), event(), event()];
    expect((await recordEvents(deps(signup), batch)).map((r) => 'recorded' in r && r.recorded && r.outcome)).toEqual(['SUBSCRIBER_CREATED', 'SUBSCRIBER_CREATED', 'NO_MATCHING_AUTOMATION', 'NO_MATCHING_AUTOMATION']);
    expect(lookups).toBe(3);
  });
});
