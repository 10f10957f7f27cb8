// The suppression list through the API (GET/POST /suppressions, DELETE /suppressions/{email}).
// Bounces and complaints add entries in app/bounces.ts; here customers list them, add MANUAL ones
// and remove any (the address can receive mail again; the subscriber's status is not changed:
// that is the subscriber service's, and a customer resets it there if they mean to).
import { type Clock, type IdSource, notFound, pageOf } from '@mailer/kit';
import type { Collection } from '@mailer/store';
import { suppressionAddress } from '../domain/suppression';
import { suppressionsOf, type SuppressionDoc, type SuppressionListReason } from '../store/suppressions';

export interface SuppressionDeps extends Clock, IdSource {
  suppressions: Collection<SuppressionDoc>;
}

export interface SuppressionPage {
  items: SuppressionDoc[];
  pageNumber: number;
  pageSize: number;
  totalItems: number;
  totalPages: number;
}

export async function listSuppressions(
  deps: SuppressionDeps,
  input: { accountId: string; email?: string; reason?: SuppressionListReason; pageNumber: number; pageSize: number },
): Promise<SuppressionPage> {
  const page = pageOf(input.pageNumber, input.pageSize);
  const email = input.email === undefined ? undefined : suppressionAddress(input.email);
  const { items, totalItems } = await suppressionsOf(deps.suppressions, input.accountId).list({ ...page, email, reason: input.reason });
  return { items, ...page, totalItems, totalPages: Math.ceil(totalItems / page.pageSize) };
}

/**
 * Suppresses the address by hand (reason MANUAL). An address already suppressed keeps its entry
 * (and its first reason): `created: false`, so a retried request is harmless.
 */
export async function addManualSuppression(deps: SuppressionDeps, input: { accountId: string; email: string }): Promise<{ suppression: SuppressionDoc; created: boolean }> {
  const email = suppressionAddress(input.email);
  const list = suppressionsOf(deps.suppressions, input.accountId);
  const doc = { _id: deps.newId(), email, reason: 'MANUAL' as const, createdAt: deps.now(), messageId: null };
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await list.find(email);
    if (existing) return { suppression: existing, created: false };
    if (await list.add(doc)) return { suppression: { ...doc, accountId: input.accountId }, created: true };
    // Added concurrently between the read and the insert: read it again.
  }
  throw new Error(`suppression of ${input.accountId} kept changing`);
}

/** The address's entry, or null when it is not suppressed (the form service's question before a signup). */
export async function getSuppression(deps: SuppressionDeps, input: { accountId: string; email: string }): Promise<SuppressionDoc | null> {
  return suppressionsOf(deps.suppressions, input.accountId).find(suppressionAddress(input.email));
}

/** Removes the address from the list, or `404 suppression_not_found`. */
export async function removeSuppression(deps: SuppressionDeps, input: { accountId: string; email: string }): Promise<void> {
  const email = suppressionAddress(input.email);
  if (!(await suppressionsOf(deps.suppressions, input.accountId).remove(email))) {
    throw notFound('suppression_not_found', `${email} is not on the suppression list`);
  }
}
