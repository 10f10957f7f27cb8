// The gateway's account records: JetStream KV bucket `gateway-accounts`, key `account.<accountId>`,
// a JSON record whose `name` is the account's display name (set by the operator when the account
// is created). The gateway alone writes the bucket. Other services read one thing from it: the
// display name, for reader pages that must say whom a reader is dealing with (the double opt-in
// page). Nothing else in the record (key hash, sealed key, limits) is theirs to use.
import type { KV, NatsConnection } from 'nats';
import { errorInfo, silent, type Log } from './log';

export const ACCOUNTS_BUCKET = 'gateway-accounts';
export const accountRecordKey = (accountId: string): string => `account.${accountId}`;

export interface AccountNames {
  /** The account's display name; null when there is none to show (unknown account, NATS away). */
  nameOf(accountId: string): Promise<string | null>;
}

/** A page waits at most this long for the name: a page without it beats a page that hangs. */
const READ_TIMEOUT_MS = 1_000;

/**
 * Reads display names from the bucket, bound on first use and never created or reconfigured here
 * (its owner declares it). A failed read answers null and is logged; the next read binds again.
 */
export function accountNames(nc: NatsConnection, log: Log = silent): AccountNames {
  let bucket: Promise<KV> | null = null;
  return {
    async nameOf(accountId) {
      try {
        bucket ??= nc.jetstream({ timeout: READ_TIMEOUT_MS }).views.kv(ACCOUNTS_BUCKET, { bindOnly: true });
        const entry = await (await bucket).get(accountRecordKey(accountId));
        if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
        const name = (entry.json() as { name?: unknown }).name;
        return typeof name === 'string' && name.trim() !== '' ? name : null;
      } catch (err) {
        bucket = null;
        log('account name not readable; the page names no account', errorInfo(err));
        return null;
      }
    },
  };
}
