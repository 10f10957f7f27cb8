import { randomUUID } from 'node:crypto';
import { SealedValueError } from '@mailer/tokens';
import type { AccountName } from '@mailer/nats/client';
import type { JsonKv } from '../kv/json-kv';
import { KvConflict } from '../kv/json-kv';
import type { WatchedKv } from '../kv/watched-kv';
import type { RateLimits } from '../ratelimit/policies';
import { generateApiKey, looksLikeApiKey, type KeyCrypto } from './api-key';

/**
 * Accounts and their (at most one) API key, in one KV bucket shared by every gateway replica:
 *
 *   account.<accountId>   -> AccountRecord (the key's lookup hash and sealed value live here)
 *   apikey.<lookupHash>   -> { accountId }  (index from a presented key to its account)
 *
 * The account record is the authority: a request is accepted only when the hash of the presented
 * key equals the hash in the account record. Rotate and delete change the record with
 * compare-and-set; the index entry is only a pointer, and a stale one (removed right after) refers
 * to an account whose hash no longer matches.
 *
 * Reading both entries from the bucket on every request cost two round trips, so a replica reads
 * them from a watched copy of the bucket (WatchedKv) while that copy holds a lease, and from the
 * bucket otherwise, or when the copy does not accept the key (a key created elsewhere a moment
 * ago). Rotate, delete and limit changes return only after `settleMs`, when every replica's copy
 * either has the change or has stopped being trusted: from that moment every replica refuses the
 * old value.
 */

export interface StoredApiKey {
  lookupHash: string;
  sealed: string;
  createdAt: string;
}

export interface AccountRecord {
  accountId: string;
  name: string;
  createdAt: string;
  apiKey: StoredApiKey | null;
  /** Overrides of the default rate limits (members absent = default). */
  limits: Partial<RateLimits>;
}

export interface AuthenticatedAccount {
  accountId: string;
  limits: Partial<RateLimits>;
}

export class AccountNotFound extends Error {
  constructor() {
    super('account not found');
  }
}
export class ApiKeyNotFound extends Error {
  constructor() {
    super('the account has no API key');
  }
}

const ACCOUNT_PREFIX = 'account.';
const accountKey = (accountId: string) => `${ACCOUNT_PREFIX}${accountId}`;
const indexKey = (lookupHash: string) => `apikey.${lookupHash}`;
const MAX_CAS_ATTEMPTS = 10;
const MAX_CACHED_KEY_OWNERS = 10_000;

export class AccountStore {
  /**
   * lookup hash -> accountId of keys seen here. Safe to keep: a key value belongs to one account
   * for ever, and the account record, read on every request, decides whether it is still that
   * account's current key. Only hits are cached, so a key created elsewhere works at once.
   */
  private readonly keyOwners = new Map<string, string>();
  /** `<accountId>.<sealed copy>` of copies opened to the key of their record's lookup hash (holdsKey). */
  private readonly openedCopies = new Set<string>();

  constructor(
    private readonly kv: JsonKv,
    private readonly crypto: KeyCrypto,
    private readonly now: () => Date = () => new Date(),
    private readonly view?: WatchedKv<unknown>,
    /** Where other processes read an account's display name (the `account-names` bucket). */
    private readonly names?: JsonKv,
  ) {}

  /**
   * The account a presented X-API-Key value belongs to, or null (one answer for every failure). The
   * index finds the account by lookup hash; the account record must hold that hash and a sealed copy
   * that opens with the account id as associated data to the presented key, so a lookup hash grafted
   * onto another account (KV write access) authenticates nobody. A key indexed under a previous
   * master key (API_KEY_MASTER_KEY_PREVIOUS) is found there and re-sealed under the current one.
   */
  async authenticate(presented: string): Promise<AuthenticatedAccount | null> {
    if (!looksLikeApiKey(presented)) return null;
    const found = await this.findByHash(this.crypto.lookupHash(presented), presented);
    if (found) return found;
    for (const hash of this.crypto.previousLookupHashes(presented)) {
      const old = await this.findByHash(hash, presented);
      // Best effort: a failed re-seal is tried again at the next use (or by reseal-secrets).
      if (old) return (await this.resealKey(old.accountId).catch(() => false), old);
    }
    return null;
  }

  /** The account whose record holds `hash` and a sealed copy of `presented`: from the watched copy, else the bucket. */
  private async findByHash(hash: string, presented: string): Promise<AuthenticatedAccount | null> {
    if (this.view?.fresh()) {
      const owner = this.view.get(indexKey(hash))?.value as { accountId: string } | undefined;
      const account = owner && (this.view.get(accountKey(owner.accountId))?.value as AccountRecord | undefined);
      if (account && this.holdsKey(account, hash, presented)) return { accountId: account.accountId, limits: account.limits ?? {} };
    }
    const accountId = this.keyOwners.get(hash) ?? (await this.kv.get<{ accountId: string }>(indexKey(hash)))?.value.accountId;
    if (!accountId) return null;
    const account = (await this.kv.get<AccountRecord>(accountKey(accountId)))?.value;
    if (!account || !this.holdsKey(account, hash, presented)) return null;
    this.rememberOwner(hash, accountId);
    return { accountId: account.accountId, limits: account.limits ?? {} };
  }

  /**
   * The record's current key has this lookup hash and its sealed copy, opened with the record's own
   * account id, is the presented key. A copy once opened to the key of this hash is remembered
   * (by account and sealed text), so a busy key costs one AES-GCM open per replica, not per request.
   */
  private holdsKey(account: AccountRecord, hash: string, presented: string): boolean {
    const current = account.apiKey;
    if (!current || !this.crypto.sameHash(current.lookupHash, hash)) return false;
    const opened = `${account.accountId}.${current.sealed}`;
    if (this.openedCopies.has(opened)) return true;
    if (!this.crypto.holds(current.sealed, account.accountId, presented)) return false;
    if (this.openedCopies.size >= MAX_CACHED_KEY_OWNERS) this.openedCopies.delete(this.openedCopies.values().next().value!);
    this.openedCopies.add(opened);
    return true;
  }

  private rememberOwner(hash: string, accountId: string): void {
    if (this.keyOwners.has(hash)) return;
    if (this.keyOwners.size >= MAX_CACHED_KEY_OWNERS) this.keyOwners.delete(this.keyOwners.keys().next().value!);
    this.keyOwners.set(hash, accountId);
  }

  async createAccount(name: string): Promise<{ accountId: string; apiKey: string }> {
    const accountId = randomUUID();
    const record: AccountRecord = { accountId, name, createdAt: this.now().toISOString(), apiKey: null, limits: {} };
    await this.kv.create(accountKey(accountId), record);
    await this.names?.put<AccountName>(accountId, { name });
    const { apiKey } = await this.createKey(accountId);
    return { accountId, apiKey };
  }

  /**
   * Writes the display name of every account whose name is not in the names bucket yet (accounts
   * created before the bucket existed, or whose name write failed). Run at start; returns how many.
   */
  async publishMissingNames(): Promise<number> {
    if (!this.names) return 0;
    let written = 0;
    for (const key of await this.kv.keys(ACCOUNT_PREFIX)) {
      const accountId = key.slice(ACCOUNT_PREFIX.length);
      if (await this.names.get(accountId)) continue;
      const record = (await this.kv.get<AccountRecord>(key))?.value;
      if (!record) continue;
      await this.names.put<AccountName>(accountId, { name: record.name });
      written++;
    }
    return written;
  }

  async getAccount(accountId: string): Promise<AccountRecord> {
    const entry = await this.kv.get<AccountRecord>(accountKey(accountId));
    if (!entry) throw new AccountNotFound();
    return entry.value;
  }

  /** Waits until every replica's watched copy has the write just made, or no longer trusts itself. */
  private async settle(): Promise<void> {
    const ms = this.view?.settleMs ?? 0;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** "create key": a new key when none exists; otherwise the existing one, unchanged. */
  async createKey(accountId: string): Promise<{ apiKey: string; created: boolean }> {
    return this.changeKey(accountId, (account) => {
      if (account.apiKey) return { keep: this.crypto.open(account.apiKey.sealed, accountId).value };
      return { replace: true };
    }).then(({ apiKey, changed }) => ({ apiKey, created: changed }));
  }

  /** "rotate key": a new value; the previous one is refused from the moment this returns. */
  async rotateKey(accountId: string): Promise<string> {
    const { apiKey } = await this.changeKey(accountId, (account) => {
      if (!account.apiKey) throw new ApiKeyNotFound();
      return { replace: true };
    });
    return apiKey;
  }

  /** "delete key": the value stops working at once; the account and its data stay. Idempotent. */
  async deleteKey(accountId: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await this.kv.get<AccountRecord>(accountKey(accountId));
      if (!entry) throw new AccountNotFound();
      const old = entry.value.apiKey;
      if (!old) return;
      try {
        await this.kv.update(accountKey(accountId), { ...entry.value, apiKey: null }, entry.revision);
      } catch (err) {
        if (err instanceof KvConflict) continue;
        throw err;
      }
      await this.kv.delete(indexKey(old.lookupHash));
      await this.settle();
      return;
    }
    throw new Error('too many concurrent changes to the account');
  }

  /** "show key": the full current value (decrypted). */
  async showKey(accountId: string): Promise<string> {
    const account = await this.getAccount(accountId);
    if (!account.apiKey) throw new ApiKeyNotFound();
    return this.crypto.open(account.apiKey.sealed, accountId).value;
  }

  /**
   * Re-seals the account's key under the current master key: a new sealed copy, the lookup hash of
   * the current key and its index entry (the old one removed). The key's value does not change.
   * False when there was nothing to do (no key, or already current). Compare-and-set, so a rotate
   * or delete racing it wins.
   */
  async resealKey(accountId: string): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await this.kv.get<AccountRecord>(accountKey(accountId));
      const old = entry?.value.apiKey;
      if (!entry || !old) return false;
      const { value, stale } = this.crypto.open(old.sealed, accountId);
      const lookupHash = this.crypto.lookupHash(value);
      if (!stale && this.crypto.sameHash(old.lookupHash, lookupHash)) return false;
      // The same value always hashes the same: a concurrent re-seal writes this very index entry.
      await this.kv.put(indexKey(lookupHash), { accountId });
      try {
        await this.kv.update(accountKey(accountId), { ...entry.value, apiKey: { ...old, lookupHash, sealed: this.crypto.seal(value, accountId) } }, entry.revision);
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
        continue; // read again: re-sealed meanwhile, or rotated (then this index entry is stale, harmless: the record decides)
      }
      if (old.lookupHash !== lookupHash) await this.kv.delete(indexKey(old.lookupHash));
      return true;
    }
    throw new Error('too many concurrent changes to the account');
  }

  /**
   * Re-seals every account's key under the current master key (the operator CLI's `reseal-secrets`),
   * so API_KEY_MASTER_KEY_PREVIOUS can be dropped. `failed` lists accounts whose key no configured
   * master key opens: they keep working only with the master key that sealed them.
   */
  async resealAll(): Promise<{ accounts: number; resealed: number; failed: string[] }> {
    const ids = (await this.kv.keys('account.')).map((k) => k.slice('account.'.length));
    let resealed = 0;
    const failed: string[] = [];
    for (const id of ids) {
      try {
        if (await this.resealKey(id)) resealed++;
      } catch (err) {
        if (!(err instanceof SealedValueError)) throw err;
        failed.push(id);
      }
    }
    return { accounts: ids.length, resealed, failed };
  }

  async setLimits(accountId: string, limits: Partial<RateLimits>): Promise<Partial<RateLimits>> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await this.kv.get<AccountRecord>(accountKey(accountId));
      if (!entry) throw new AccountNotFound();
      const merged = { ...entry.value.limits, ...limits };
      try {
        await this.kv.update(accountKey(accountId), { ...entry.value, limits: merged }, entry.revision);
        await this.settle();
        return merged;
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
      }
    }
    throw new Error('too many concurrent changes to the account');
  }

  /**
   * Installs a new key (or keeps the current one) with compare-and-set on the account record, so
   * two concurrent "create key" calls can never leave two keys. The index entry of the new key is
   * written first (a key must be findable the moment it is returned); the old one is removed last.
   */
  private async changeKey(
    accountId: string,
    plan: (account: AccountRecord) => { keep: string } | { replace: true },
  ): Promise<{ apiKey: string; changed: boolean }> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await this.kv.get<AccountRecord>(accountKey(accountId));
      if (!entry) throw new AccountNotFound();
      const decision = plan(entry.value);
      if ('keep' in decision) return { apiKey: decision.keep, changed: false };

      const apiKey = generateApiKey();
      const stored: StoredApiKey = {
        lookupHash: this.crypto.lookupHash(apiKey),
        sealed: this.crypto.seal(apiKey, accountId),
        createdAt: this.now().toISOString(),
      };
      await this.kv.put(indexKey(stored.lookupHash), { accountId });
      try {
        await this.kv.update(accountKey(accountId), { ...entry.value, apiKey: stored }, entry.revision);
      } catch (err) {
        await this.kv.delete(indexKey(stored.lookupHash));
        if (err instanceof KvConflict) continue;
        throw err;
      }
      const old = entry.value.apiKey;
      if (old) {
        await this.kv.delete(indexKey(old.lookupHash));
        await this.settle(); // the old value must be refused everywhere before the new one is handed out
      }
      return { apiKey, changed: true };
    }
    throw new Error('too many concurrent changes to the account');
  }
}
