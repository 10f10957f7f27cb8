import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ackedPublisher, openKv } from '@mailer/nats';
import { startNatsServer, startPausableProxy, type NatsServerHandle, type PausableProxy } from '@mailer/testing';
import { AccountStore } from '../src/accounts/accounts';
import { createKeyCrypto } from '../src/accounts/api-key';
import { BUCKETS } from '../src/kv/buckets';
import { natsJsonKv } from '../src/kv/json-kv';
import { WatchedKv } from '../src/kv/watched-kv';
import { adminRequest, createAccount, gatewaySecrets, startGateway } from './support/harness';

// Replicas authenticate from a watched copy of the accounts bucket that is trusted only under a
// lease (src/kv/watched-kv.ts). Here replica B's watch runs through a paused TCP proxy, so its copy
// cannot learn of a rotation while its direct reads and writes still work: the lease alone must
// keep it from accepting the rotated-away key. (Real NATS server, real AccountStores.)
const LEASE_MS = 300;
let nats: NatsServerHandle;
let proxy: PausableProxy;
const connections: NatsConnection[] = [];
const views: WatchedKv<unknown>[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  proxy = await startPausableProxy(Number(new URL(nats.url).port));
});
afterAll(async () => {
  proxy?.resume();
  for (const v of views) v.close();
  await Promise.all(connections.map((nc) => nc.close()));
  await proxy?.close();
  await nats?.stop();
});

async function bucket(nc: NatsConnection) {
  const b = BUCKETS.accounts;
  return openKv(nc, b.name, { ttlMs: b.ttlMs, storage: b.storage, history: 1, allowDirect: false });
}

async function connection(url: string) {
  const nc = await connect({ servers: url, ...nats.auth });
  connections.push(nc);
  return nc;
}

/** The accounts bucket as the gateway reads and writes it. */
async function accountsKv(url: string) {
  const nc = await connection(url);
  return natsJsonKv(await bucket(nc), BUCKETS.accounts.name, ackedPublisher(nc));
}

async function replica(watchUrl: string, crypto: ReturnType<typeof createKeyCrypto>) {
  const view = await WatchedKv.open<unknown>(await bucket(await connection(watchUrl)), { key: '>', leaseMs: LEASE_MS, onError: () => {} });
  views.push(view);
  return { view, accounts: new AccountStore(await accountsKv(nats.url), crypto, undefined, view) };
}

const until = async (check: () => Promise<boolean> | boolean, ms = 3_000) => {
  for (const end = Date.now() + ms; !(await check()); ) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
};

it('a replica whose watch is stalled never accepts a key rotated meanwhile, and trusts its copy again after', async () => {
  const crypto = createKeyCrypto(randomBytes(32).toString('base64'));
  const a = await replica(nats.url, crypto);
  const b = await replica(`nats://127.0.0.1:${proxy.port}`, crypto);
  const { accountId, apiKey: old } = await a.accounts.createAccount('Stalled');
  await until(() => b.view.get(`account.${accountId}`) !== undefined);
  expect(await b.accounts.authenticate(old)).toEqual({ accountId, limits: {} });

  proxy.pause();
  try {
    const started = performance.now();
    const fresh = await a.accounts.rotateKey(accountId);
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS); // rotate waited out every lease
    expect(b.view.fresh()).toBe(false);
    // b's copy still holds the old key, but is no longer trusted: b reads the bucket directly.
    expect((b.view.get(`account.${accountId}`)?.value as { apiKey: { lookupHash: string } }).apiKey.lookupHash).toBe(crypto.lookupHash(old));
    expect(await b.accounts.authenticate(old)).toBeNull();
    expect(await b.accounts.authenticate(fresh)).toEqual({ accountId, limits: {} });
  } finally {
    proxy.resume();
  }
  await until(() => b.view.fresh());
  expect(await b.accounts.authenticate(old)).toBeNull();
});

it('limit changes and key deletion have reached the other replica when they return', async () => {
  const crypto = createKeyCrypto(randomBytes(32).toString('base64'));
  const a = await replica(nats.url, crypto);
  const b = await replica(`nats://127.0.0.1:${proxy.port}`, crypto);
  const { accountId, apiKey } = await a.accounts.createAccount('Limits');
  await a.accounts.setLimits(accountId, { perMinute: 7 });
  expect(await b.accounts.authenticate(apiKey)).toEqual({ accountId, limits: { perMinute: 7 } });
  await a.accounts.deleteKey(accountId);
  expect(await b.accounts.authenticate(apiKey)).toBeNull();
});

it('through the gateway processes: rotate takes the lease, and the other replica refuses the old key at once', async () => {
  const env = { ...gatewaySecrets(), GATEWAY_ACCOUNT_LEASE_MS: String(LEASE_MS), SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1' };
  const gwA = await startGateway({ NATS_URL: nats.url, ...env });
  const gwB = await startGateway({ NATS_URL: nats.url, ...env });
  try {
    const { accountId, apiKey: old } = await createAccount(gwA, 'Lease');
    const get = (gw: typeof gwA, key: string) => fetch(`${gw.url}/account/api-key`, { headers: { 'x-api-key': key } }).then((r) => r.status);
    expect(await get(gwB, old)).toBe(403); // authenticated (API keys may not manage keys)
    const started = performance.now();
    const { apiKey } = await adminRequest<{ apiKey: string }>(gwA, 'POST', `/admin/accounts/${accountId}/api-key/rotate`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS);
    expect(await get(gwB, old)).toBe(401);
    expect(await get(gwB, apiKey)).toBe(403);
  } finally {
    await Promise.all([gwA.stop(), gwB.stop()]);
  }
});

it('a copy nobody reads stops renewing its lease (no round trips while idle) and takes it again at the next read', async () => {
  const kv = await bucket(await connection(nats.url));
  let renewals = 0;
  const counted = new Proxy(kv, {
    get: (target, prop) => (prop === 'status' ? () => (renewals++, target.status()) : Reflect.get(target, prop)),
  });
  const view = await WatchedKv.open<unknown>(counted, { key: '>', leaseMs: LEASE_MS, onError: () => {} });
  views.push(view);
  // Idle for ten renewal periods: at most the one that found nobody asking.
  renewals = 0;
  await new Promise((r) => setTimeout(r, (LEASE_MS / 3) * 10));
  expect(renewals).toBeLessThanOrEqual(1);
  expect(view.fresh()).toBe(false); // the lease lapsed meanwhile; this read resumes renewing it
  await until(() => view.fresh());
  // While read, the lease is renewed every period.
  const before = renewals;
  for (const end = Date.now() + LEASE_MS * 2; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) view.fresh();
  expect(renewals - before).toBeGreaterThanOrEqual(4);
  await until(() => view.fresh());
});
