// Accounts' display names, for reader pages that must say whom a reader is dealing with (the double
// opt-in page). The gateway owns the accounts and writes each one's name into its own JetStream KV
// bucket `account-names` (key: the account id, value: {"name": ...}), apart from the bucket of
// account records and API keys, which no other process may read. Names never change once written.
import type { KV, NatsConnection } from 'nats';
import { errorInfo, silent, type Log } from './log';

export const ACCOUNT_NAMES_BUCKET = 'account-names';

export interface AccountName {
  name: string;
}

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
        bucket ??= nc.jetstream({ timeout: READ_TIMEOUT_MS }).views.kv(ACCOUNT_NAMES_BUCKET, { bindOnly: true });
        const entry = await (await bucket).get(accountId);
        if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
        const name = (entry.json() as Partial<AccountName>).name;
        return typeof name === 'string' && name.trim() !== '' ? name : null;
      } catch (err) {
        bucket = null;
        log('account name not readable; the page names no account', errorInfo(err));
        return null;
      }
    },
  };
}
