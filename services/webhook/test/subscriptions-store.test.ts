// The subscriptions repository on the embedded store: account scoping, fan-out matching, re-enabling
// fresh, secret rotation keeping the previous secret 24 h, and the delivery-driven state changes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { newSecret, signingSecrets, type Subscription } from '../src/domain/subscription';
import { subscriptionRepository, type SubscriptionRepository } from '../src/store/subscriptions';

let dir: string;
let store: Store;
let subs: SubscriptionRepository;
const T0 = new Date('2026-01-01T00:00:00Z');

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-subs-'));
  store = await openStore({ dataDir: dir });
  subs = subscriptionRepository(store);
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
