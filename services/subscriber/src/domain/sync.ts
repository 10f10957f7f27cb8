// SyncSubscribers: planning every row of a request against the account and the existing subscribers (pure).
import { DomainError, invalid } from '@mailer/kit';
import { AccountDefinitions, diffSubscriber, mergeSyncRow, newSubscriber, SubscriberDiff } from './contacts';
import { canonicalEmail } from './email';
import { LIMITS } from './limits';
import type { SubscriberInput, SubscriberState } from './types';

export type SyncMode = 'UPSERT' | 'CREATE_ONLY' | 'UPDATE_ONLY';
export type SyncOutcome = 'CREATED' | 'UPDATED' | 'UNCHANGED' | 'FAILED';

export interface SyncRowResult {
  index: number;
  /** The canonical email, or the row's email as sent when it is not a valid address. */
  email: string;
  subscriberId?: string;
  outcome: SyncOutcome;
  errorId?: string;
  message?: string;
}

export interface SyncUpdate {
  before: SubscriberState;
  after: SubscriberState;
  diff: SubscriberDiff;
}

/** A row whose request form could not even be read (say, an unknown status value): it fails alone. */
export interface UnreadableRow {
  unreadable: DomainError;
  email: string;
}
export type SyncRow = SubscriberInput | UnreadableRow;
const isUnreadable = (r: SyncRow): r is UnreadableRow => 'unreadable' in r;

export interface SyncPlan {
  results: SyncRowResult[];
  creates: SubscriberState[];
  updates: SyncUpdate[];
}

export function assertSyncSize(rows: number): void {
  if (rows > LIMITS.syncRows) {
    throw invalid('sync_too_many_rows', `a sync request holds at most ${LIMITS.syncRows} rows, got ${rows}`, [{ path: 'subscribers', problem: `more than ${LIMITS.syncRows} rows` }]);
  }
}

/** The canonical emails of the rows that have a valid one (what to look up before planning). */
export function syncEmails(rows: readonly SyncRow[]): string[] {
  const out: string[] = [];
  for (const row of rows) {
    if (isUnreadable(row)) continue;
    try {
      out.push(canonicalEmail(row.email));
    } catch {
      // reported per row by planSync
    }
  }
  return out;
}

/**
 * One result per row, in order. A row that fails (any DomainError of the single-subscriber rules,
 * a mode conflict, or an email an earlier row of the request already used) is FAILED with its
 * errorId and never affects the others. Existing subscribers get the row's members merged
 * (UPDATED), or UNCHANGED when nothing differs, which makes repeating a sync a no-op.
 */
export function planSync(
  rows: readonly SyncRow[],
  mode: SyncMode,
  defs: AccountDefinitions,
  existingByEmail: ReadonlyMap<string, SubscriberState>,
  newId: () => string,
  now: string,
): SyncPlan {
  assertSyncSize(rows.length);
  const results: SyncRowResult[] = [];
  const creates: SubscriberState[] = [];
  const updates: SyncUpdate[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    let email = String(row.email ?? '').slice(0, LIMITS.email + 10);
    const fail = (errorId: string, message: string, subscriberId?: string) =>
      results.push({ index, email, outcome: 'FAILED', errorId, message, ...(subscriberId ? { subscriberId } : {}) });
    if (isUnreadable(row)) return fail(row.unreadable.errorId, row.unreadable.message);
    try {
      email = canonicalEmail(row.email);
      if (seen.has(email)) return fail('duplicate_email_in_request', `an earlier row of this request has the email ${email}`);
      seen.add(email);
      const existing = existingByEmail.get(email);
      if (existing) {
        if (mode === 'CREATE_ONLY') return fail('subscriber_email_exists', `a subscriber with email ${email} already exists`, existing.id);
        const merged = mergeSyncRow(existing, row, defs);
        const diff = diffSubscriber(existing, merged);
        if (!diff.changed) return results.push({ index, email, subscriberId: existing.id, outcome: 'UNCHANGED' });
        const after = { ...merged, version: existing.version + 1 };
        updates.push({ before: existing, after, diff });
        return results.push({ index, email, subscriberId: existing.id, outcome: 'UPDATED' });
      }
      if (mode === 'UPDATE_ONLY') return fail('subscriber_not_found', `no subscriber has the email ${email}`);
      const created = newSubscriber(row, defs, newId(), now);
      creates.push(created);
      return results.push({ index, email, subscriberId: created.id, outcome: 'CREATED' });
    } catch (err) {
      if (err instanceof DomainError) return fail(err.errorId, err.message);
      throw err;
    }
  });
  return { results, creates, updates };
}
