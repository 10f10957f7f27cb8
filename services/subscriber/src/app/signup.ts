// Use cases of signups through forms: Signup (the form service's submission job) and
// ConfirmSubscriber (the double opt-in confirmation page). Both are safe to call again: a
// redelivered job or a second click finds the subscriber and changes nothing more.
import { DomainError, invalid } from '@mailer/kit';
import { diffSubscriber, newSubscriber, type AccountDefinitions } from '../domain/contacts';
import { canonicalEmail } from '../domain/email';
import type { SubscriberStatus } from '../domain/subscriber';
import { joinTopics, validateTopicRefs } from '../domain/topics';
import type { Consent, FieldDef, FieldValueInput, StoredValue, SubscriberState } from '../domain/types';
import { KIND_OF_TYPE } from '../domain/values';
import { changeEvents, createdEvent } from '../events/subscriber-events';
import { atomically, ConcurrentChange } from '../store/atomic';
import { ensureDefaultTopic } from './default-topic';
import { loadDefinitions } from './definitions';
import { eventsCommitted, newIdOf, nowOf, type Deps } from './deps';
import { changeSubscriber } from './subscriber-change';

export interface SignupInput {
  accountId: string;
  email: string;
  /** personalizationTagName -> value as the form submitted it. */
  values: Record<string, unknown>;
  topicIds: string[];
  doubleOptIn: boolean;
  consentText: string;
  /** The form signed up through; empty for a custom event's consent (eventId). */
  formId: string;
  /** When the consent was given (ISO 8601); absent: now. */
  consentGivenAt?: string;
  /** The custom event whose consent signs the address up; absent for forms. */
  eventId?: string;
  /** 0: no limit. */
  subscriberLimit: number;
}

export type SignupOutcome = 'CREATED' | 'EXISTING' | 'LIMIT_REACHED';

export interface SignupResult {
  outcome: SignupOutcome;
  subscriberId: string | null;
  status: SubscriberStatus | null;
  previousStatus: SubscriberStatus | null;
}

/** Statuses in which a signup through a form adds the form's topics to an existing subscriber. */
const JOINABLE: readonly SubscriberStatus[] = ['ACTIVE', 'UNCONFIRMED'];

export async function signup(deps: Deps, input: SignupInput): Promise<SignupResult> {
  const { accountId } = input;
  const email = canonicalEmail(input.email);
  await ensureDefaultTopic(deps, accountId); // a form without topics joins the default one
  const now = nowOf(deps);
  const out = await atomically(deps.store, async (tx) => {
    const [current, defs] = await Promise.all([deps.subscribers.getByEmail(accountId, email), loadDefinitions(deps, accountId)]);
    const { firstName, fields } = submittedValues(input.values, defs);
    const topicIds = validateTopicRefs(input.topicIds, defs.topics);
    if (current) {
      // an existing address: never its values (whoever submits the form need not own the address)
      if (!JOINABLE.includes(current.status)) return { result: existing(current, current), wrote: false };
      const membership = joinTopics(current, topicIds);
      const next = { ...current, topicIds: membership.topicIds, optOuts: membership.optOuts };
      const diff = diffSubscriber(current, next);
      if (!diff.changed) return { result: existing(current, current), wrote: false };
      const after = { ...next, version: current.version + 1 };
      await deps.subscribers.write(tx, accountId, { updates: [{ before: current, after }], events: changeEvents(accountId, current, after, diff, defs, now) }, now);
      return { result: existing(current, after), wrote: true };
    }
    if (input.subscriberLimit > 0 && (await deps.subscribers.count(accountId)) >= input.subscriberLimit) {
      return { result: { outcome: 'LIMIT_REACHED' as const, subscriberId: null, status: null, previousStatus: null }, wrote: false };
    }
    const state: SubscriberState = {
      ...newSubscriber({ email, firstName, status: input.doubleOptIn ? 'UNCONFIRMED' : 'ACTIVE', tags: [], topicIds: topicIds.length ? topicIds : undefined, fields }, defs, newIdOf(deps), now),
      // A submission without a consent text (the form shows none) records no consent: an empty text is no consent.
      ...(input.consentText ? { consent: consentOf(input, now) } : {}),
    };
    try {
      await deps.subscribers.write(tx, accountId, { inserts: [state], events: [createdEvent(accountId, state, defs, now)] }, now);
    } catch (err) {
      // the same address signed up concurrently (a redelivered job): read it again as existing
      if (err instanceof DomainError && err.errorId === 'subscriber_email_exists') throw new ConcurrentChange('subscriber email');
      throw err;
    }
    return { result: { outcome: 'CREATED' as const, subscriberId: state.id, status: state.status, previousStatus: null }, wrote: true };
  });
  if (out.wrote) await eventsCommitted(deps);
  return out.result;
}

function consentOf(input: SignupInput, now: string): Consent {
  return {
    text: input.consentText,
    ...(input.formId ? { formId: input.formId } : {}),
    ...(input.eventId ? { eventId: input.eventId } : {}),
    at: input.consentGivenAt ? new Date(input.consentGivenAt).toISOString() : now,
  };
}

function existing(before: SubscriberState, after: SubscriberState): SignupResult {
  return { outcome: 'EXISTING', subscriberId: after.id, status: after.status, previousStatus: before.status };
}

/**
 * The submitted values: the built-in `email` is the request's address (ignored here), `first_name`
 * the first name; every other name must be a custom field of the account, whose type gives the kind.
 * A form submits a choice as its option's label (what the reader saw and picked); a subscriber holds
 * option ids (optionIdsOf).
 */
function submittedValues(values: Record<string, unknown>, defs: AccountDefinitions): { firstName: string | null; fields: FieldValueInput[] } {
  const byTag = new Map(defs.catalog.fields.map((f) => [f.personalizationTagName, f] as const));
  const { email: _email, first_name: firstName, ...custom } = values;
  if (firstName !== undefined && firstName !== null && typeof firstName !== 'string') {
    throw invalid('validation_failed', 'first_name must be text', [{ path: 'values.first_name', problem: 'must be a string' }]);
  }
  const fields = Object.entries(custom).flatMap(([name, value]) => {
    const field = byTag.get(name);
    if (!field) throw invalid('validation_failed', `no field has the personalizationTagName ${name}`, [{ path: `values.${name}`, problem: 'unknown field' }]);
    const stored = field.fieldType === 'SINGLE_CHOICE' || field.fieldType === 'MULTI_CHOICE' ? optionIdsOf(field, value) : (value as StoredValue);
    return stored === null ? [] : [{ fieldId: field.id, value: { kind: KIND_OF_TYPE[field.fieldType], value: stored } }];
  });
  return { firstName: firstName ?? null, fields };
}

/**
 * The ids of the active options a choice's labels name (labels are unique in a field). A label that
 * names no active option (deactivated between the reader's submission and this signup) is no choice:
 * left out, so that the signup itself still goes through rather than failing for good.
 */
function optionIdsOf(field: FieldDef, value: unknown): string | string[] | null {
  const named = (label: unknown) => field.options.find((o) => o.active && o.label === label);
  if (field.fieldType === 'SINGLE_CHOICE') return named(value)?.id ?? null;
  const ids = (Array.isArray(value) ? value : [value]).flatMap((label) => named(label)?.id ?? []);
  return ids.length ? ids : null;
}

/** UNCONFIRMED -> ACTIVE (subscriber.confirmed); any other status stays as it is. */
export async function confirmSubscriber(deps: Deps, input: { accountId: string; subscriberId: string }): Promise<{ status: SubscriberStatus; previousStatus: SubscriberStatus }> {
  let previousStatus: SubscriberStatus | undefined;
  const { state } = await changeSubscriber(deps, input.accountId, input.subscriberId, (current) => {
    previousStatus = current.status;
    return current.status === 'UNCONFIRMED' ? { ...current, status: 'ACTIVE' } : current;
  });
  return { status: state.status, previousStatus: previousStatus ?? state.status };
}
