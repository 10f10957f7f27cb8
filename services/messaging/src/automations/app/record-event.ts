// Use case RecordEvent: one custom event consumed from the EVENTS stream becomes one record of the
// event log (GET /events) and one `event.received` fact, exactly once per eventId whatever NATS
// redelivers: the record's _id is the eventId (unique), and the fact is written to the outbox in the
// same transaction, so a second delivery (lost ack, re-published message, a consumer reset) finds
// the record, commits nothing and is acknowledged.
//
// An event that active automations match starts their runs (at most one per automation and event,
// the entry rules permitting) in this same transaction: the run records (with the entry of a ONCE
// automation, which outlives its run), the automations' runsStarted
// and one `automation-run` job per run through the outbox. A redelivered event therefore finds its
// record and starts nothing; a crash before the commit leaves nothing behind to run twice.
//
// RecordEvents does the same for a batch of events in one transaction, with one read of the events
// recorded already, one subscriber lookup call per account (every address of the batch at once) and
// one automations lookup per event key of the batch. When the transaction fails (a concurrent delivery
// recorded one of the events, two of them raced for one entry rule, the store refused one of them),
// the batch is recorded event by event instead.
import { domainFact, factSubject, job, type CustomEvent, type DomainMessage } from '@mailer/nats/facts';
import { DomainError, GrpcStatus, groupBy, PeerUnavailable } from '@mailer/kit';
import { DuplicateKeyError, type Collection, type Store, type Transaction } from '@mailer/store';
import { eventOutcome, type EventOutcome } from '../domain/event-outcome';
import type { EntryRule } from '../domain/automation';
import type { AutomationRepository } from '../store/automations';
import { EVENTS, eventsOf, type EventDoc } from '../store/events';
import type { OutboxRepository } from '@mailer/nats';
import { ONCE_ENTRIES, onceEntriesOf, type OnceEntryDoc } from '../store/once-entries';
import { entryKey, RUNS, runsOf, type RunDoc } from '../store/runs';
import type { RecipientLookup } from '../../mail/app/accept-message';

/**
 * Signs an unknown address up with the consent sent with its event (the API contract: "an UNCONFIRMED
 * subscriber is created with the consent recorded (gdprAgreement = source and givenAt) and a double
 * opt-in mail is sent as for a form signup"): the form service's ConsentSignup, the same double
 * opt-in decision as a form submission (clients/forms.ts).
 *
 * Idempotent per `eventId`: a redelivered event may call it again after the subscriber was created
 * and before the event was recorded; its lookup then finds that subscriber (`subscriberKnown`), and
 * the form service answers the signup this event made (one decision, one confirmation mail). For a
 * known address that this event did not sign up, it answers null: nothing signed up.
 */
export type ConsentSignup = (input: {
  accountId: string;
  email: string;
  consent: { source: string; givenAt: string };
  eventId: string;
  subscriberKnown: boolean;
}) => Promise<ConsentSignupAnswer | null>;

export interface ConsentSignupAnswer {
  /** The double opt-in decision (the form service's names: QUEUED, SUPPRESSED_SUBSCRIBER_POLICY, ...). */
  decision: string;
  /** The subscriber the signup left; null: none (a suppressed address, the subscriber quota). */
  subscriberId: string | null;
  /** Its status right after the signup: UNCONFIRMED for one this event created. */
  subscriberStatus: string | null;
}

/** The subscriber service's lookup of many addresses of one account in one call (clients/subscribers.ts). */
export interface SubscriberIdLookup {
  /** The id of the account's subscriber with each of these addresses that has one, by the address as given. */
  subscriberIdsByEmail(accountId: string, emails: string[]): Promise<Map<string, string>>;
}

export interface RecordEventDeps {
  store: Store;
  events: Collection<EventDoc>;
  automations: Pick<AutomationRepository, 'activeTriggeredBy' | 'countRuns'>;
  runs: Collection<RunDoc>;
  onceEntries: Collection<OnceEntryDoc>;
  newId: () => string;
  outbox: OutboxRepository;
  /** The batch's addresses at once; one address on its own (an event with consent, or when the batch call failed). */
  subscribers: RecipientLookup & SubscriberIdLookup;
  consentSignup: ConsentSignup;
  now: () => Date;
  notifyOutbox: () => void;
}

export type RecordEventResult = { recorded: true; outcome: EventOutcome } | { recorded: false };
/** An event's result in a batch, or the error it met (retried by the consumer). */
export type RecordEventsResult = RecordEventResult | { error: unknown };

/** The outbox id (and so the msgID) of an event's `event.received` fact: one per event. */
export const eventReceivedFactId = (eventId: string) => `event.received:${eventId}`;
/** The outbox id (msgID) of a run's first job. */
export const automationRunJobId = (runId: string) => `automation-run:${runId}`;

export async function recordEvent(deps: RecordEventDeps, event: CustomEvent): Promise<RecordEventResult> {
  // Most redeliveries stop here, before asking the subscriber service anything.
  if (await eventsOf(deps.events, event.accountId).exists(event.eventId)) return { recorded: false };
  const prepared = await prepareEvent(deps, event, sharedLookups(deps, [event]));
  try {
    await deps.store.transaction(async (tx) => deps.outbox.record(tx, await writeEvents(deps, [prepared], tx)));
  } catch (err) {
    // Two deliveries of one event at once: the other one recorded it.
    if (err instanceof DuplicateKeyError && err.collection === EVENTS) return { recorded: false };
    // Two events of one subscriber raced past the entry rule: retried (then the rule sees the other's entry or run).
    if (err instanceof DuplicateKeyError && (err.collection === RUNS || err.collection === ONCE_ENTRIES)) throw new Error(`event ${event.eventId}: an entry rule's key was taken concurrently; retrying`);
    throw err;
  }
  deps.notifyOutbox();
  return { recorded: true, outcome: prepared.doc.outcome };
}

/** Use case RecordEvents: a batch of events, one result per event in order. Throws when the store cannot be read. */
export async function recordEvents(deps: RecordEventDeps, events: readonly CustomEvent[]): Promise<RecordEventsResult[]> {
  const results: RecordEventsResult[] = new Array(events.length);
  // Recorded already (one read per account), or twice in the batch: nothing to do.
  const fresh: number[] = [];
  await Promise.all([...groupBy(events.keys(), (i) => events[i].accountId)].map(async ([accountId, indexes]) => {
    const known = await eventsOf(deps.events, accountId).recorded(indexes.map((i) => events[i].eventId));
    for (const i of indexes) {
      const id = events[i].eventId;
      if (known.has(id)) results[i] = { recorded: false };
      else (known.add(id), fresh.push(i));
    }
  }));
  const lookups = sharedLookups(deps, fresh.map((i) => events[i]));
  const prepared = new Map<number, PreparedEvent>();
  await Promise.all(fresh.map(async (i) => {
    try {
      prepared.set(i, await prepareEvent(deps, events[i], lookups));
    } catch (error) {
      results[i] = { error };
    }
  }));
  if (prepared.size === 0) return results;
  try {
    await deps.store.transaction(async (tx) => deps.outbox.recordTogether(tx, await writeEvents(deps, [...prepared.values()], tx)));
    for (const [i, p] of prepared) results[i] = { recorded: true, outcome: p.doc.outcome };
  } catch {
    // A concurrent delivery recorded one of them, two of them raced for one entry rule, or the store
    // refused one of them: one by one, each with its own answer, so that one event the store refuses
    // is retried alone and the others of its batch are neither held back nor redone. (A store that
    // fails for all of them fails each, and the consumer retries them all.)
    for (const i of prepared.keys()) results[i] = await recordEvent(deps, events[i]).catch((error: unknown) => ({ error }));
  }
  deps.notifyOutbox();
  return results;
}

/** What recording one event writes. */
interface PreparedEvent {
  doc: EventDoc;
  newRuns: RunDoc[];
  /** The entries of the ONCE automations it enters. */
  onceEntries: OnceEntryDoc[];
  /** The payload of its event.received fact. */
  fact: DomainMessage['payload'];
}

/** Lookups the events of a batch share: the subscribers of each account's addresses in one call, each event key once. */
interface SharedLookups {
  subscriber(event: CustomEvent): Promise<string | null>;
  automations(accountId: string, eventKey: string): Promise<Array<{ id: string; entry: EntryRule }>>;
}

function sharedLookups(deps: RecordEventDeps, events: readonly CustomEvent[]): SharedLookups {
  // An event with consent is left out: it may sign its address up, so it asks on its own (and the next
  // one of that address asks again).
  const addresses = new Map<string, Set<string>>();
  for (const e of events) if (!e.consent) addresses.set(e.accountId, (addresses.get(e.accountId) ?? new Set()).add(e.email));
  const batches = new Map<string, Promise<Map<string, string> | null>>();
  const single = new Map<string, Promise<string | null>>();
  const automations = new Map<string, Promise<Array<{ id: string; entry: EntryRule }>>>();
  const once = <T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> => {
    let found = cache.get(key);
    if (!found) cache.set(key, (found = load()));
    return found;
  };
  return {
    async subscriber(event) {
      if (event.consent) return subscriberOf(deps, event);
      // A failed batch call (the service not answering, or refusing the list for one address it does not
      // take, or too old to know the call) is not the events' answer: each address then asks on its
      // own, as before batching, so that an address's refusal or failure stays that address's.
      const batch = await once(batches, event.accountId, () => deps.subscribers.subscriberIdsByEmail(event.accountId, [...addresses.get(event.accountId)!]).catch(() => null));
      return batch ? (batch.get(event.email) ?? null) : once(single, `${event.accountId}\0${event.email}`, () => subscriberOf(deps, event));
    },
    automations: (accountId, eventKey) => once(automations, `${accountId}\0${eventKey}`, () => deps.automations.activeTriggeredBy(accountId, eventKey)),
  };
}

/** The event's record, the runs it starts and its fact: everything but the writes. */
async function prepareEvent(deps: RecordEventDeps, event: CustomEvent, lookups: SharedLookups): Promise<PreparedEvent> {
  let subscriberId = await lookups.subscriber(event);
  let subscriberCreated = false;
  let consentDecision: string | null = null;
  if (event.consent) {
    const signup = await signUpWithConsent(deps, event, event.consent, subscriberId !== null);
    if (signup) {
      consentDecision = signup.decision;
      subscriberId = signup.subscriberId;
      // UNCONFIRMED: the signup's own subscriber (double opt-in pending), whom no automation acts for yet.
      // Anything else (an ACTIVE one that a form signed up meanwhile) is an existing subscriber.
      subscriberCreated = signup.subscriberId !== null && signup.subscriberStatus === 'UNCONFIRMED';
    }
  }
  const runs = runsOf(deps.runs, event.accountId);
  const entries = onceEntriesOf(deps.onceEntries, event.accountId);
  const matched = event.triggerAutomations && subscriberId !== null && !subscriberCreated ? await lookups.automations(event.accountId, event.eventKey) : [];
  // The entry rules (the API contract): ONCE never a second run for the subscriber (its entry),
  // ONE_AT_A_TIME not while one is unfinished. Two events racing past this check meet the unique
  // keys of the entries and runs: the loser's transaction fails and its event is retried, which
  // then finds the winner's entry or run here.
  const mayEnter = async (a: { id: string; entry: EntryRule }, subscriber: string): Promise<boolean> => {
    if (a.entry === 'ONCE') return !(await entries.has(a.id, subscriber));
    if (a.entry === 'ONE_AT_A_TIME') return !(await runs.hasUnfinished(a.id, subscriber));
    return true;
  };
  const entering: Array<{ id: string; entry: EntryRule }> = [];
  for (const a of matched) if (subscriberId !== null && (await mayEnter(a, subscriberId))) entering.push(a);
  const matchedAutomationIds = entering.map((a) => a.id);
  const outcome = eventOutcome({ triggerAutomations: event.triggerAutomations, subscriberId, subscriberCreated, matchedAutomationIds });
  const now = deps.now();
  const newRuns: RunDoc[] =
    outcome === 'RUNS_STARTED'
      ? entering.map((a) => ({
          _id: deps.newId(),
          accountId: event.accountId,
          automationId: a.id,
          eventId: event.eventId,
          subscriberId: subscriberId!,
          email: event.email,
          status: 'RUNNING',
          stepIndex: 0,
          startedAt: now,
          updatedAt: now,
          dueAt: null,
          leaseUntil: null,
          steps: [],
          finishedAt: null,
          ...(a.entry === 'ONE_AT_A_TIME' ? { activeKey: entryKey(a.id, subscriberId!) } : {}),
        }))
      : [];
  // (newRuns[i] is the run of entering[i])
  const onceEntries = newRuns.flatMap((r, i) =>
    entering[i].entry === 'ONCE' ? [{ _id: r._id, accountId: r.accountId, automationId: r.automationId, subscriberId: r.subscriberId, enteredAt: now }] : [],
  );

  const doc: EventDoc = {
    _id: event.eventId,
    accountId: event.accountId,
    eventKey: event.eventKey,
    email: event.email,
    occurredAt: new Date(event.occurredAt),
    receivedAt: new Date(event.receivedAt),
    propertiesJson: JSON.stringify(event.properties ?? {}),
    triggerAutomations: event.triggerAutomations,
    consent: event.consent ? { source: event.consent.source, givenAt: new Date(event.consent.givenAt) } : null,
    consentDecision,
    subscriberId,
    outcome,
    runIds: newRuns.map((r) => r._id),
    matchedAutomationIds: outcome === 'RUNS_STARTED' ? matchedAutomationIds : [],
    recordedAt: now,
  };
  const { payload: fact } = domainFact({
    type: 'event.received',
    accountId: doc.accountId,
    // the fact of an event happens when the event did; receivedAt says when it reached us
    occurredAt: doc.occurredAt.toISOString(),
    eventId: doc._id,
    eventKey: doc.eventKey,
    email: doc.email,
    receivedAt: doc.receivedAt.toISOString(),
    properties: event.properties ?? {},
    triggerAutomations: doc.triggerAutomations,
    subscriberId: doc.subscriberId,
    outcome: doc.outcome,
    runIds: doc.runIds,
    consentDecision: doc.consentDecision ?? null,
  });
  return { doc, newRuns, onceEntries, fact };
}

/** Writes the events' records and runs in the caller's transaction; the facts and jobs to record with them. */
async function writeEvents(deps: RecordEventDeps, prepared: PreparedEvent[], tx: Transaction): Promise<Array<{ subject: string; payload: unknown; id: string }>> {
  const started = new Map<string, { accountId: string; automationId: string; runs: number }>();
  for (const [accountId, ps] of groupBy(prepared, (p) => p.doc.accountId)) {
    await eventsOf(deps.events, accountId).insertAll(ps.map((p) => p.doc), tx);
    const newRuns = ps.flatMap((p) => p.newRuns);
    await runsOf(deps.runs, accountId).insert(newRuns, tx);
    await onceEntriesOf(deps.onceEntries, accountId).insert(ps.flatMap((p) => p.onceEntries), tx);
    for (const r of newRuns) {
      const key = `${accountId}\0${r.automationId}`;
      const counted = started.get(key) ?? { accountId, automationId: r.automationId, runs: 0 };
      counted.runs++;
      started.set(key, counted);
    }
  }
  for (const c of started.values()) await deps.automations.countRuns(c.accountId, c.automationId, { runsStarted: c.runs }, tx);
  return prepared.flatMap(({ doc, newRuns, fact }) => [
    { subject: factSubject('event.received'), payload: fact, id: eventReceivedFactId(doc._id) },
    // the run's id is the job's msgID: one job per run
    ...newRuns.map((r) => ({ ...job('automation-run', { accountId: r.accountId, runId: r._id }), id: automationRunJobId(r._id) })),
  ]);
}

/**
 * The id of the account's subscriber with the event's address, or null. The subscriber service
 * refusing the address (INVALID_ARGUMENT: not an address it takes) is an answer, no subscriber; not
 * answering throws, and the event is retried.
 */
async function subscriberOf(deps: RecordEventDeps, event: CustomEvent): Promise<string | null> {
  try {
    return (await deps.subscribers.recipientByEmail(event.accountId, event.email))?.id ?? null;
  } catch (err) {
    if (err instanceof DomainError && !(err instanceof PeerUnavailable) && err.code === GrpcStatus.INVALID_ARGUMENT) return null;
    throw err;
  }
}

/**
 * The consent signup of the event's address (ConsentSignup). The form service refusing the request
 * (INVALID_ARGUMENT: an address the subscriber service does not take) is an answer, nothing signed
 * up; not answering throws, and the event is retried.
 */
async function signUpWithConsent(
  deps: RecordEventDeps,
  event: CustomEvent,
  consent: { source: string; givenAt: string },
  subscriberKnown: boolean,
): Promise<ConsentSignupAnswer | null> {
  try {
    return await deps.consentSignup({ accountId: event.accountId, email: event.email, consent, eventId: event.eventId, subscriberKnown });
  } catch (err) {
    if (err instanceof DomainError && !(err instanceof PeerUnavailable) && err.code === GrpcStatus.INVALID_ARGUMENT) return null;
    throw err;
  }
}
