// Use case RecordEvent: one custom event consumed from the EVENTS stream becomes one record of the
// event log (GET /events) and one `event.received` fact, exactly once per eventId whatever NATS
// redelivers: the record's _id is the eventId (unique), and the fact is written to the outbox in the
// same transaction, so a second delivery (lost ack, re-published message, a consumer reset) finds
// the record, commits nothing and is acknowledged.
//
// Interim (until the run engine exists): an event that an active automation matches is recorded
// RUNS_STARTED with no runIds and the matched automations in `matchedAutomationIds`; the run engine
// starts the runs in this same transaction and fills runIds.
import { domainFact, factSubject, type CustomEvent } from '@mailer/nats/facts';
import { DomainError, GrpcStatus, PeerUnavailable } from '@mailer/kit';
import { DuplicateKeyError, type Collection, type Store } from '@mailer/store';
import { eventOutcome, type EventOutcome } from '../domain/event-outcome';
import type { AutomationRepository } from '../store/automations';
import { EVENTS, eventsOf, type EventDoc } from '../store/events';
import type { OutboxRepository } from '../store/outbox';
import type { RecipientLookup } from './accept-message';

/**
 * Signs an unknown address up with the consent sent with its event (API.md: "an UNCONFIRMED
 * subscriber is created with the consent recorded (gdprAgreement = source and givenAt) and a double
 * opt-in mail is sent as for a form signup"). Answers the subscriber's id, or null when no
 * subscriber was created.
 *
 * It must be idempotent per `requestId` (the eventId): a redelivered event may call it again after
 * the subscriber was created and before the event was recorded, and must get the same answer
 * (`created: true` again), so the event is still recorded SUBSCRIBER_CREATED and no second
 * confirmation mail goes out.
 */
export type ConsentSignup = (input: {
  accountId: string;
  email: string;
  consent: { source: string; givenAt: string };
  requestId: string;
}) => Promise<{ subscriberId: string; created: boolean } | null>;

/**
 * TODO(issue 13, consent signup): the subscriber service's SignupService.Signup (branch i12-signup:
 * proto/mailer/subscriber/v1/signup.proto, outcome CREATED | EXISTING | LIMIT_REACHED) is not on this
 * branch yet. Once it is, clients/subscribers.ts calls it here (double_opt_in true, the consent's
 * source and givenAt as the gdprAgreement) and the confirmation mail goes out as for a form signup.
 * Mind the redelivery of an event whose signup succeeded but whose record did not commit: the lookup
 * above then finds the new UNCONFIRMED subscriber, so the confirmation mail must be keyed by the
 * eventId (sent once) and the outcome should stay SUBSCRIBER_CREATED (e.g. Signup answering EXISTING
 * for a subscriber created by this same request). Until then an unknown address with consent is
 * recorded NO_SUBSCRIBER, as one without consent.
 */
export const consentSignupNotAvailable: ConsentSignup = async () => null;

export interface RecordEventDeps {
  store: Store;
  events: Collection<EventDoc>;
  automations: Pick<AutomationRepository, 'activeForEventKey'>;
  outbox: OutboxRepository;
  subscribers: RecipientLookup;
  consentSignup: ConsentSignup;
  now: () => Date;
  notifyOutbox: () => void;
}

export type RecordEventResult = { recorded: true; outcome: EventOutcome } | { recorded: false };

/** The outbox id (and so the msgID) of an event's `event.received` fact: one per event. */
export const eventReceivedFactId = (eventId: string) => `event.received:${eventId}`;

export async function recordEvent(deps: RecordEventDeps, event: CustomEvent): Promise<RecordEventResult> {
  const events = eventsOf(deps.events, event.accountId);
  // Most redeliveries stop here, before asking the subscriber service anything.
  if (await events.exists(event.eventId)) return { recorded: false };

  let subscriberId = await subscriberOf(deps, event);
  let subscriberCreated = false;
  if (subscriberId === null && event.consent) {
    const signup = await deps.consentSignup({ accountId: event.accountId, email: event.email, consent: event.consent, requestId: event.eventId });
    if (signup) ({ subscriberId, created: subscriberCreated } = signup);
  }
  const matchedAutomationIds = event.triggerAutomations && subscriberId !== null ? await deps.automations.activeForEventKey(event.accountId, event.eventKey) : [];
  const outcome = eventOutcome({ triggerAutomations: event.triggerAutomations, subscriberId, subscriberCreated, matchedAutomationIds });

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
    subscriberId,
    outcome,
    runIds: [],
    matchedAutomationIds: outcome === 'RUNS_STARTED' ? matchedAutomationIds : [],
    recordedAt: deps.now(),
  };
  const fact = domainFact({
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
  });
  try {
    await deps.store.transaction(async (tx) => {
      await events.insert(doc, tx);
      await deps.outbox.record(tx, [{ subject: factSubject('event.received'), payload: fact.payload, id: eventReceivedFactId(doc._id) }]);
    });
  } catch (err) {
    // Two deliveries of one event at once: the other one recorded it.
    if (err instanceof DuplicateKeyError && err.collection === EVENTS) return { recorded: false };
    throw err;
  }
  deps.notifyOutbox();
  return { recorded: true, outcome };
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
