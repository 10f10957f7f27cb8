// Use cases of a subscriber's replaceable data: GetSubscriberData, ReplaceSubscriberData,
// ReplaceSubscriberEmail, ReplaceSubscriberFirstName, ReplaceSubscriberStatus.
import { replaceData } from '../domain/contacts';
import { canonicalEmail } from '../domain/email';
import type { Catalog } from '../domain/fields';
import { manualStatus, normalizeFirstName, type SubscriberStatus } from '../domain/subscriber';
import type { FieldValueInput, SubscriberState } from '../domain/types';
import { loadCatalog } from './definitions';
import type { Deps } from './deps';
import { changeSubscriber, existingSubscriber, type SubscriberWithDefinitions } from './subscriber-change';

interface Target {
  accountId: string;
  subscriberId: string;
}

export async function getSubscriberData(deps: Deps, input: Target): Promise<{ state: SubscriberState; catalog: Catalog }> {
  const [state, catalog] = await Promise.all([existingSubscriber(deps, input.accountId, input.subscriberId), loadCatalog(deps, input.accountId)]);
  return { state, catalog };
}

export interface ReplaceSubscriberDataInput extends Target {
  email: string;
  firstName: string | null;
  status?: SubscriberStatus;
  fields: FieldValueInput[];
  tags: string[];
}

export async function replaceSubscriberData(deps: Deps, input: ReplaceSubscriberDataInput): Promise<SubscriberWithDefinitions> {
  const { email, firstName, status, fields, tags } = input;
  return changeSubscriber(deps, input.accountId, input.subscriberId, (current, defs) => replaceData(current, { email, firstName, status, fields, tags }, defs));
}

/** `email` is validated inside the change (an unknown subscriber is reported before a bad address). */
export async function replaceSubscriberEmail(deps: Deps, input: Target & { email: string }): Promise<SubscriberWithDefinitions> {
  return changeSubscriber(deps, input.accountId, input.subscriberId, (current) => ({ ...current, email: canonicalEmail(input.email) }));
}

export async function replaceSubscriberFirstName(deps: Deps, input: Target & { firstName: string | null }): Promise<SubscriberWithDefinitions> {
  return changeSubscriber(deps, input.accountId, input.subscriberId, (current) => ({ ...current, firstName: normalizeFirstName(input.firstName) }));
}

export async function replaceSubscriberStatus(deps: Deps, input: Target & { status?: SubscriberStatus }): Promise<SubscriberWithDefinitions> {
  return changeSubscriber(deps, input.accountId, input.subscriberId, (current) => ({ ...current, status: manualStatus(input.status) }));
}
