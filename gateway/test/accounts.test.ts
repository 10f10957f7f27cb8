import { randomBytes } from 'node:crypto';
import { AccountNotFound, AccountStore, ApiKeyNotFound } from '../src/accounts/accounts';
import { createKeyCrypto, maskApiKey } from '../src/accounts/api-key';
import { memoryKv } from './support/memory-kv';

function store() {
  const kv = memoryKv();
  return { kv, accounts: new AccountStore(kv, createKeyCrypto(randomBytes(32).toString('base64'))) };
}

describe('AccountStore: the spec\'s API key state table', () => {
  it('create account -> a key that authenticates to that account', async () => {
    const { accounts } = store();
    const { accountId, apiKey } = await accounts.createAccount('Acme');
    expect(await accounts.authenticate(apiKey)).toEqual({ accountId, limits: {} });
    expect(await accounts.showKey(accountId)).toBe(apiKey);
  });

  it('never stores the key in clear', async () => {
    const { accounts, kv } = store();
    const { apiKey } = await accounts.createAccount('Acme');
    for (const [k, v] of kv.dump()) {
      expect(k).not.toContain(apiKey);
      expect(v.value).not.toContain(apiKey);
      expect(v.value).not.toContain(apiKey.slice(3));
    }
  });

  it('create key when a key exists: the existing key, unchanged, no second key', async () => {
    const { accounts, kv } = store();
    const { accountId, apiKey } = await accounts.createAccount('Acme');
    const before = [...kv.dump().keys()].filter((k) => k.startsWith('apikey.'));
    expect(await accounts.createKey(accountId)).toEqual({ apiKey, created: false });
    expect([...kv.dump().keys()].filter((k) => k.startsWith('apikey.'))).toEqual(before);
  });

  it('concurrent create-key on an account without a key leaves exactly one key', async () => {
    const { accounts, kv } = store();
    const { accountId } = await accounts.createAccount('Acme');
    await accounts.deleteKey(accountId);
    const results = await Promise.all(Array.from({ length: 8 }, () => accounts.createKey(accountId)));
    const keys = new Set(results.map((r) => r.apiKey));
    expect(keys.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect([...kv.dump().keys()].filter((k) => k.startsWith('apikey.'))).toHaveLength(1);
    expect(await accounts.authenticate([...keys][0])).not.toBeNull();
  });

  it('rotate: the new value works, the previous one is refused at once', async () => {
    const { accounts } = store();
    const { accountId, apiKey: old } = await accounts.createAccount('Acme');
    const fresh = await accounts.rotateKey(accountId);
    expect(fresh).not.toBe(old);
    expect(await accounts.authenticate(old)).toBeNull();
    expect(await accounts.authenticate(fresh)).toMatchObject({ accountId });
    expect(await accounts.showKey(accountId)).toBe(fresh);
  });

  it('a key used before rotate/delete on another replica is refused by this one at once (no cached authorisation)', async () => {
    const kv = memoryKv();
    const crypto = createKeyCrypto(randomBytes(32).toString('base64'));
    const replicaA = new AccountStore(kv, crypto);
    const replicaB = new AccountStore(kv, crypto);
    const { accountId, apiKey } = await replicaA.createAccount('Acme');
    for (let i = 0; i < 3; i++) expect(await replicaB.authenticate(apiKey)).toMatchObject({ accountId });
    const rotated = await replicaA.rotateKey(accountId);
    expect(await replicaB.authenticate(apiKey)).toBeNull();
    expect(await replicaB.authenticate(rotated)).toMatchObject({ accountId });
    await replicaA.deleteKey(accountId);
    expect(await replicaB.authenticate(rotated)).toBeNull();
  });

  it('a stale index entry of a rotated key does not authenticate (the account record decides)', async () => {
    const { accounts, kv } = store();
    const { accountId, apiKey: old } = await accounts.createAccount('Acme');
    const oldIndex = [...kv.dump()].find(([k]) => k.startsWith('apikey.'))!;
    await accounts.rotateKey(accountId);
    // Simulate the old index entry surviving (e.g. its delete failed).
    await kv.put(oldIndex[0], JSON.parse(oldIndex[1].value));
    expect(await accounts.authenticate(old)).toBeNull();
  });

  it('delete: refused at once, account data kept, not restorable; idempotent', async () => {
    const { accounts } = store();
    const { accountId, apiKey } = await accounts.createAccount('Acme');
    await accounts.setLimits(accountId, { perMinute: 7 });
    await accounts.deleteKey(accountId);
    expect(await accounts.authenticate(apiKey)).toBeNull();
    await expect(accounts.showKey(accountId)).rejects.toBeInstanceOf(ApiKeyNotFound);
    await expect(accounts.rotateKey(accountId)).rejects.toBeInstanceOf(ApiKeyNotFound);
    await accounts.deleteKey(accountId);
    const account = await accounts.getAccount(accountId);
    expect(account).toMatchObject({ name: 'Acme', apiKey: null, limits: { perMinute: 7 } });
    const { apiKey: next, created } = await accounts.createKey(accountId);
    expect(created).toBe(true);
    expect(next).not.toBe(apiKey);
    expect(await accounts.authenticate(apiKey)).toBeNull();
  });

  it('masked, blank and foreign keys are refused', async () => {
    const { accounts } = store();
    const { apiKey } = await accounts.createAccount('Acme');
    const other = store();
    const { apiKey: foreign } = await other.accounts.createAccount('Other');
    // One character changed (never to itself: the key may already end in 'X').
    const altered = `${apiKey.slice(0, -1)}${apiKey.endsWith('X') ? 'Y' : 'X'}`;
    for (const bad of ['', '   ', maskApiKey(apiKey), altered, foreign]) {
      expect(await accounts.authenticate(bad)).toBeNull();
    }
  });

  it('unknown accounts', async () => {
    const { accounts } = store();
    const id = '00000000-0000-4000-8000-000000000000';
    await expect(accounts.getAccount(id)).rejects.toBeInstanceOf(AccountNotFound);
    await expect(accounts.createKey(id)).rejects.toBeInstanceOf(AccountNotFound);
    await expect(accounts.deleteKey(id)).rejects.toBeInstanceOf(AccountNotFound);
    await expect(accounts.setLimits(id, { perMinute: 1 })).rejects.toBeInstanceOf(AccountNotFound);
  });

  it('limits merge and are returned by authenticate', async () => {
    const { accounts } = store();
    const { accountId, apiKey } = await accounts.createAccount('Acme');
    await accounts.setLimits(accountId, { perMinute: 5 });
    await accounts.setLimits(accountId, { eventsBurst: 9 });
    expect(await accounts.authenticate(apiKey)).toEqual({ accountId, limits: { perMinute: 5, eventsBurst: 9 } });
  });
});

describe('AccountStore: the key lookup binds the account', () => {
  it('a lookup hash grafted onto another account (index and record edited in the KV) authenticates nobody', async () => {
    const kv = memoryKv();
    const crypto = createKeyCrypto(randomBytes(32).toString('base64'));
    const accounts = new AccountStore(kv, crypto);
    const a = await accounts.createAccount('A');
    const b = await accounts.createAccount('B'); // the attacker's own account and key
    expect(await accounts.authenticate(b.apiKey)).toMatchObject({ accountId: b.accountId }); // owner cached
    const read = (key: string) => JSON.parse(kv.dump().get(key)!.value);
    const bKey = read(`account.${b.accountId}`).apiKey;
    // The graft: B's key indexed to A, A's record holding B's hash and sealed copy, B's record without it.
    await kv.put(`apikey.${bKey.lookupHash}`, { accountId: a.accountId });
    await kv.put(`account.${a.accountId}`, { ...read(`account.${a.accountId}`), apiKey: bKey });
    await kv.put(`account.${b.accountId}`, { ...read(`account.${b.accountId}`), apiKey: null });
    expect(await accounts.authenticate(b.apiKey)).toBeNull();
    expect(await new AccountStore(kv, crypto).authenticate(b.apiKey)).toBeNull(); // a replica that never saw it
  });
});

describe('AccountStore: API_KEY_MASTER_KEY rotation', () => {
  const master = () => randomBytes(32).toString('base64');
  const indexEntries = (kv: ReturnType<typeof memoryKv>) => [...kv.dump().keys()].filter((k) => k.startsWith('apikey.')).sort();

  it('keys sealed under the previous master key keep working, are re-sealed and re-indexed on use, and reseal-secrets does the rest', async () => {
    const [oldMaster, newMaster] = [master(), master()];
    const kv = memoryKv();
    const before = new AccountStore(kv, createKeyCrypto(oldMaster));
    const used = await before.createAccount('used');
    const idle = await before.createAccount('idle');
    const rotated = new AccountStore(kv, createKeyCrypto(newMaster, [oldMaster]));
    const current = createKeyCrypto(newMaster);

    expect(await rotated.authenticate(used.apiKey)).toMatchObject({ accountId: used.accountId });
    const record = JSON.parse(kv.dump().get(`account.${used.accountId}`)!.value);
    expect(record.apiKey.lookupHash).toBe(current.lookupHash(used.apiKey));
    expect(current.open(record.apiKey.sealed, used.accountId)).toEqual({ value: used.apiKey, stale: false });
    expect(indexEntries(kv)).toEqual([`apikey.${current.lookupHash(used.apiKey)}`, `apikey.${createKeyCrypto(oldMaster).lookupHash(idle.apiKey)}`].sort());

    expect(await rotated.resealAll()).toEqual({ accounts: 2, resealed: 1, failed: [] });
    expect(await rotated.resealAll()).toEqual({ accounts: 2, resealed: 0, failed: [] });
    const after = new AccountStore(kv, current); // the previous master key removed
    for (const { accountId, apiKey } of [used, idle]) {
      expect(await after.authenticate(apiKey)).toMatchObject({ accountId });
      expect(await after.showKey(accountId)).toBe(apiKey);
    }
    expect(indexEntries(kv)).toEqual([used, idle].map((x) => `apikey.${current.lookupHash(x.apiKey)}`).sort());
  });

  it('reseal-secrets names the accounts no configured master key opens (they keep their value)', async () => {
    const kv = memoryKv();
    const lost = await new AccountStore(kv, createKeyCrypto(master())).createAccount('lost');
    const accounts = new AccountStore(kv, createKeyCrypto(master()));
    const fine = await accounts.createAccount('fine');
    expect(await accounts.resealAll()).toEqual({ accounts: 2, resealed: 0, failed: [lost.accountId] });
    expect(await accounts.authenticate(lost.apiKey)).toBeNull();
    expect(await accounts.authenticate(fine.apiKey)).toMatchObject({ accountId: fine.accountId });
  });
});

describe('AccountStore: display names for reader pages', () => {
  it('an account created is named in the names bucket, which holds nothing else', async () => {
    const kv = memoryKv();
    const names = memoryKv();
    const accounts = new AccountStore(kv, createKeyCrypto(randomBytes(32).toString('base64')), undefined, undefined, names);
    const { accountId, apiKey } = await accounts.createAccount("Ann's Shop");
    expect([...names.dump()].map(([k, v]) => [k, JSON.parse(v.value)])).toEqual([[accountId, { name: "Ann's Shop" }]]);
    expect(JSON.stringify([...names.dump()])).not.toContain(apiKey.slice(3, 12));
  });

  it('accounts created before the names bucket existed get their name at start, once', async () => {
    const kv = memoryKv();
    const crypto = createKeyCrypto(randomBytes(32).toString('base64'));
    const before = new AccountStore(kv, crypto);
    const { accountId: a } = await before.createAccount('Acme');
    const { accountId: b } = await before.createAccount('Bolt');
    const names = memoryKv();
    const accounts = new AccountStore(kv, crypto, undefined, undefined, names);
    expect(await accounts.publishMissingNames()).toBe(2);
    expect(await names.get(a)).toMatchObject({ value: { name: 'Acme' } });
    expect(await names.get(b)).toMatchObject({ value: { name: 'Bolt' } });
    expect(await accounts.publishMissingNames()).toBe(0);
  });
});
