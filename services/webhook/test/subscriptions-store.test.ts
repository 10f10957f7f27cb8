// The subscriptions repository on the embedded store: account scoping, fan-out matching, re-enabling
// fresh, secret rotation keeping the previous secret 24 h, and the delivery-driven state changes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { newSecret, signingSecrets, type Subscription } from '../src/domain/subscription';
import { secretKeyring, SUBSCRIPTIONS, subscriptionRepository, subscriptionSchema, type SubscriptionDoc, type SubscriptionRepository } from '../src/store/subscriptions';

let dir: string;
let store: Store;
let subs: SubscriptionRepository;
let key: Buffer;
const T0 = new Date('2026-01-01T00:00:00Z');

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-subs-'));
  store = await openStore({ dataDir: dir });
  key = randomBytes(32);
  subs = subscriptionRepository(store, secretKeyring(key));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sub = (id: string, accountId: string, over: Partial<Subscription> = {}): Subscription => ({
  id,
  accountId,
  targetUrl: 'https://example.com/hook',
  event: '*',
  deliveryContentType: 'application/json',
  active: true,
  secret: newSecret(),
  previousSecret: null,
  previousSecretExpiresAt: null,
  disabledReason: null,
  createdAt: T0,
  updatedAt: T0,
  failingSince: null,
  ...over,
});

it('makes secrets of whsec_ and 32 random bytes', () => {
  const s = newSecret();
  expect(s).toMatch(/^whsec_/);
  expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
  expect(newSecret()).not.toBe(s);
});

it('scopes get, list, update, delete and rotation to the account', async () => {
  await subs.create(sub('s-1', 'acc-1'));
  expect((await subs.get('acc-1', 's-1'))?.targetUrl).toBe('https://example.com/hook');
  expect(await subs.get('acc-2', 's-1')).toBeNull();
  expect(await subs.list('acc-2')).toEqual([]);
  const changes = { targetUrl: 'https://example.org/x', event: 'email.sent' as const, deliveryContentType: 'text/plain' as const, updatedAt: new Date() };
  expect(await subs.update('acc-2', 's-1', changes)).toBeNull();
  expect(await subs.rotateSecret('acc-2', 's-1', newSecret(), new Date())).toBeNull();
  expect(await subs.delete('acc-2', 's-1')).toBe(false);
  expect(await subs.update('acc-1', 's-1', changes)).toMatchObject({ targetUrl: 'https://example.org/x', event: 'email.sent', deliveryContentType: 'text/plain' });
  expect(await subs.delete('acc-1', 's-1')).toBe(true);
  expect(await subs.get('acc-1', 's-1')).toBeNull();
});

it('matches active subscriptions naming the event or *, in the account only', async () => {
  await subs.create(sub('all', 'acc-1'));
  await subs.create(sub('sent', 'acc-1', { event: 'email.sent' }));
  await subs.create(sub('other', 'acc-1', { event: 'email.opened' }));
  await subs.create(sub('off', 'acc-1', { event: 'email.sent', active: false }));
  await subs.create(sub('foreign', 'acc-2', { event: 'email.sent' }));
  expect((await subs.activeMatching('acc-1', 'email.sent')).map((s) => s.id).sort()).toEqual(['all', 'sent']);
});

it('disables with a reason and re-enables fresh on active: true', async () => {
  await subs.create(sub('s-1', 'acc-1'));
  const failing = await subs.markFailing('acc-1', 's-1', T0);
  expect(failing?.failingSince).toEqual(T0);
  // A later failure keeps the first failure's time.
  expect((await subs.markFailing('acc-1', 's-1', new Date(T0.getTime() + 1000)))?.failingSince).toEqual(T0);
  expect(await subs.disable('acc-1', 's-1', 'TARGET_GONE', new Date())).toBe(true);
  expect(await subs.disable('acc-1', 's-1', 'TARGET_GONE', new Date())).toBe(false);
  expect(await subs.activeMatching('acc-1', 'email.sent')).toEqual([]);
  const base = { targetUrl: 'https://example.com/hook', event: '*' as const, deliveryContentType: 'application/json' as const, updatedAt: new Date() };
  expect(await subs.update('acc-1', 's-1', base)).toMatchObject({ active: false, disabledReason: 'TARGET_GONE' });
  expect(await subs.update('acc-1', 's-1', { ...base, active: true })).toMatchObject({ active: true, disabledReason: null, failingSince: null });
});

it('keeps the failing state of an active subscription on active: true, and markHealthy clears it', async () => {
  await subs.create(sub('s-1', 'acc-1'));
  await subs.markFailing('acc-1', 's-1', T0);
  const base = { targetUrl: 'https://example.com/hook', event: '*' as const, deliveryContentType: 'application/json' as const, updatedAt: new Date() };
  expect((await subs.update('acc-1', 's-1', { ...base, active: true }))?.failingSince).toEqual(T0);
  await subs.markHealthy('acc-1', 's-1');
  expect((await subs.get('acc-1', 's-1'))?.failingSince).toBeNull();
  expect((await subs.update('acc-1', 's-1', { ...base, active: false }))).toMatchObject({ active: false, disabledReason: null });
});

it('rotates the secret keeping the previous one for 24 h', async () => {
  const first = sub('s-1', 'acc-1');
  await subs.create(first);
  const next = newSecret();
  const rotated = await subs.rotateSecret('acc-1', 's-1', next, T0);
  expect(rotated).toMatchObject({ secret: next, previousSecret: first.secret, previousSecretExpiresAt: new Date(T0.getTime() + 24 * 3600_000) });
  expect(signingSecrets(rotated!, new Date(T0.getTime() + 23 * 3600_000))).toEqual([next, first.secret]);
  expect(signingSecrets(rotated!, new Date(T0.getTime() + 24 * 3600_000))).toEqual([next]);
});

describe('signing secrets at rest', () => {
  const raw = () => store.collection<SubscriptionDoc>(SUBSCRIPTIONS, subscriptionSchema);
  const isSealed = (value: string) => secretKeyring(key).isSealed(value);
  /** Every string of every stored document, as they lie in the store. */
  const storedText = async () => JSON.stringify(await raw().find({}));

  it('are stored sealed (bound to their subscription), read back in clear, also after a rotation', async () => {
    const first = sub('s-1', 'acc-1');
    await subs.create(first);
    const next = newSecret();
    await subs.rotateSecret('acc-1', 's-1', next, T0);
    const text = await storedText();
    for (const secret of [first.secret, next]) expect(text).not.toContain(secret.slice(6));
    const doc = (await raw().findOne({ _id: 's-1' }))!;
    expect([isSealed(doc.secret), isSealed(doc.previousSecret!)]).toEqual([true, true]);
    expect(await subs.get('acc-1', 's-1')).toMatchObject({ secret: next, previousSecret: first.secret });
    // A sealed secret copied onto another subscription does not open there.
    await subs.create(sub('s-2', 'acc-1'));
    await raw().updateOne({ _id: 's-2' }, { $set: { secret: doc.secret } });
    await expect(subs.get('acc-1', 's-2')).rejects.toThrow(/does not open with this key/);
  });

  it('stored in clear by an older version: keep signing, sealed when read, and all at once by resealAll', async () => {
    const [a, b] = [sub('old-a', 'acc-1', { previousSecret: newSecret(), previousSecretExpiresAt: T0 }), sub('old-b', 'acc-2')];
    for (const { id, ...rest } of [a, b]) await raw().insertOne({ _id: id, ...rest }); // as an older version wrote them
    expect(await storedText()).toContain(a.secret);
    expect(await subs.get('acc-1', 'old-a')).toMatchObject({ secret: a.secret, previousSecret: a.previousSecret });
    const readA = (await raw().findOne({ _id: 'old-a' }))!;
    expect([isSealed(readA.secret), isSealed(readA.previousSecret!)]).toEqual([true, true]);
    expect(await subs.resealAll()).toEqual({ subscriptions: 2, resealed: 1, failed: [] });
    const text = await storedText();
    for (const secret of [a.secret, a.previousSecret!, b.secret]) expect(text).not.toContain(secret.slice(6));
    expect((await subs.activeMatching('acc-2', 'email.sent')).map((s) => s.secret)).toEqual([b.secret]);
    expect(await subs.resealAll()).toEqual({ subscriptions: 2, resealed: 0, failed: [] });
  });

  it('keyring: a previous key still opens what it sealed, re-sealed under the current one on read or by resealAll; then the previous key can go', async () => {
    const [x, y] = [sub('x', 'acc-1'), sub('y', 'acc-1')];
    await subs.create(x);
    await subs.create(y);
    const newKey = randomBytes(32);
    const rotated = subscriptionRepository(store, secretKeyring(newKey, [key]));
    expect((await rotated.get('acc-1', 'x'))?.secret).toBe(x.secret); // read: re-sealed under the new key
    const onlyNew = subscriptionRepository(store, secretKeyring(newKey));
    expect((await onlyNew.get('acc-1', 'x'))?.secret).toBe(x.secret);
    await expect(onlyNew.get('acc-1', 'y')).rejects.toThrow(/does not open with this key/);
    expect(await onlyNew.resealAll()).toEqual({ subscriptions: 2, resealed: 0, failed: ['y'] });
    expect(await rotated.resealAll()).toEqual({ subscriptions: 2, resealed: 1, failed: [] });
    expect((await onlyNew.list('acc-1')).map((s) => s.secret)).toEqual([x.secret, y.secret]);
  });
});
