// Secrets at rest, through the real gateway, the real webhook service and the real NATS KV:
// - webhook signing secrets never lie in clear in the webhook store, and answers replayed for an
//   Idempotency-Key (create, rotate-secret) never lie in clear in the idempotency bucket;
// - a webhook store written before secrets were sealed keeps working and is sealed at start;
// - API_KEY_MASTER_KEY and SECRET_SEALING_KEY rotate: with the old value in *_PREVIOUS everything
//   keeps working, is re-sealed on use and by `npm run admin -- reseal-secrets` (which asks the webhook
//   and messaging services), after which the old value can go;
// - a lookup hash grafted onto another account in the KV authenticates nobody.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { connect, type KV, type NatsConnection } from 'nats';
import { openStore } from '@mailer/store';
import { repoRoot, startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { createKeyCrypto } from '../src/accounts/api-key';
import { secretKeyring, SUBSCRIPTIONS, subscriptionSchema } from '../../services/webhook/src/store/subscriptions';
import { call, createAccount, startGateway, type GatewayHandle } from './support/harness';

jest.setTimeout(180_000);

const key = () => randomBytes(32).toString('base64');
const ADMIN_TOKEN = randomBytes(24).toString('hex');
let nats: NatsServerHandle;
let nc: NatsConnection;
const running: Array<{ stop(): Promise<unknown> }> = [];
const dirs: string[] = [];

// Each test its own NATS server: the accounts bucket holds only that test's accounts.
beforeEach(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
});
afterEach(async () => {
  for (const p of running.splice(0).reverse()) await p.stop().catch(() => undefined);
  await nc?.close();
  await nats?.stop();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-sealed-'));
  dirs.push(d);
  return d;
};

async function webhookService(dataDir: string, sealing: string, previous: string[] = []): Promise<RunningService> {
  const svc = await startService('webhook', { NATS_URL: nats.url, DATA_DIR: dataDir, SECRET_SEALING_KEY: sealing, SECRET_SEALING_KEY_PREVIOUS: previous.join(',') });
  running.push(svc);
  return svc;
}

/** The messaging service seals the sending domains' DKIM keys under the same key (dkim-key-rotation.int.test.ts). */
async function messagingService(dataDir: string, sealing: string, previous: string[] = []): Promise<RunningService> {
  const svc = await startService('messaging', { NATS_URL: nats.url, DATA_DIR: dataDir, SECRET_SEALING_KEY: sealing, SECRET_SEALING_KEY_PREVIOUS: previous.join(',') });
  running.push(svc);
  return svc;
}

async function gateway(webhook: RunningService, master: string, previous: string[] = [], messaging?: RunningService): Promise<GatewayHandle> {
  const gw = await startGateway({
    NATS_URL: nats.url,
    WEBHOOK_GRPC_ADDR: webhook.address,
    ...(messaging ? { MESSAGING_GRPC_ADDR: messaging.address } : {}),
    ADMIN_TOKEN,
    API_KEY_MASTER_KEY: master,
    API_KEY_MASTER_KEY_PREVIOUS: previous.join(','),
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
  });
  running.push(gw);
  return gw;
}

/** Every byte of every file under `dir`, as text. */
const filesText = (dir: string): string =>
  fs.readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? filesText(path.join(dir, e.name)) : fs.readFileSync(path.join(dir, e.name), 'latin1'))).join('\n');

/** Every value of a KV bucket, as text. */
async function bucketText(name: string): Promise<string> {
  const kv = await nc.jetstream().views.kv(name);
  const out: string[] = [];
  for await (const k of await kv.keys()) out.push(k, new TextDecoder().decode((await kv.get(k))?.value ?? new Uint8Array()));
  return out.join('\n');
}

const subscriptionBody = { targetUrl: 'https://hooks.example.com/mailer', event: '*' };

it('signing secrets are sealed in the webhook store, and idempotent replays of create and rotate-secret are sealed in the KV; a replay is the very first answer', async () => {
  const dataDir = tempDir();
  const webhook = await webhookService(dataDir, key());
  const gw = await gateway(webhook, key());
  const { apiKey } = await createAccount(gw, 'sealed');
  const post = (p: string, idempotencyKey: string, body?: unknown) => call(gw, 'POST', p, { apiKey, body, headers: { 'idempotency-key': idempotencyKey } });

  const created = await post('/webhook-subscriptions', 'create-1', subscriptionBody);
  expect(created.status).toBe(201);
  const { id, secret: first } = created.json;
  const replayed = await post('/webhook-subscriptions', 'create-1', subscriptionBody);
  expect([replayed.status, replayed.headers.get('idempotency-replay'), replayed.json]).toEqual([201, 'true', created.json]);

  const rotated = await post(`/webhook-subscriptions/${id}/rotate-secret`, 'rotate-1');
  expect(rotated.status).toBe(200);
  const second = rotated.json.secret;
  expect(second).not.toBe(first);
  // A later rotation does not change what the first one's key replays (the answer itself is stored).
  const third = (await post(`/webhook-subscriptions/${id}/rotate-secret`, 'rotate-2')).json.secret;
  expect((await post(`/webhook-subscriptions/${id}/rotate-secret`, 'rotate-1')).json).toEqual({ secret: second });
  expect((await call(gw, 'GET', `/webhook-subscriptions/${id}`, { apiKey })).json.secret).toBe(third);

  const secrets = [first, second, third].map((s: string) => s.slice('whsec_'.length));
  const idempotencyBucket = await bucketText('gateway-idempotency');
  expect(idempotencyBucket).toContain('"sealed":"s1.'); // the records are there, sealed
  const store = filesText(dataDir);
  expect(store).toContain(id); // the subscription is there
  for (const s of secrets) expect({ inBucket: idempotencyBucket.includes(s), inStore: store.includes(s) }).toEqual({ inBucket: false, inStore: false });
});

it('a webhook store written before secrets were sealed keeps working: its clear secrets are sealed at start, and served unchanged', async () => {
  const dataDir = tempDir();
  const [master, sealing] = [key(), key()];
  // An account first (its gateway needs no webhook service for that).
  const first = await startGateway({ NATS_URL: nats.url, ADMIN_TOKEN, API_KEY_MASTER_KEY: master });
  const { accountId, apiKey } = await createAccount(first, 'from an older version');
  await first.stop();
  // What the older version left: the subscription with its secrets in clear.
  const clear = { id: randomUUID(), secret: `whsec_${randomBytes(32).toString('base64')}`, previousSecret: `whsec_${randomBytes(32).toString('base64')}` };
  const before = await openStore({ dataDir: path.join(dataDir, 'webhook') });
  const now = new Date();
  await before.collection(SUBSCRIPTIONS, subscriptionSchema).insertOne({
    _id: clear.id, accountId, targetUrl: 'https://hooks.example.com/old', event: '*', deliveryContentType: 'application/json', active: true,
    secret: clear.secret, previousSecret: clear.previousSecret, previousSecretExpiresAt: new Date(now.getTime() + 3600_000),
    disabledReason: null, createdAt: now, updatedAt: now, failingSince: null,
  });
  await before.close();

  // Sealed at start, in the background: the service says so in its log.
  let webhook = await webhookService(dataDir, sealing);
  const deadline = Date.now() + 20_000;
  while (!/webhook signing secrets re-sealed/.test(webhook.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(webhook.output()).toMatch(/"subscriptions":1,"resealed":1,"failed":\[\].*webhook signing secrets re-sealed/);
  await webhook.stop();
  const after = await openStore({ dataDir: path.join(dataDir, 'webhook') });
  const doc = await after.collection<{ _id: string; secret: string; previousSecret: string }>(SUBSCRIPTIONS, subscriptionSchema).findOne({ _id: clear.id });
  await after.close();
  expect([doc!.secret, doc!.previousSecret].map((v) => secretKeyring(Buffer.from(sealing, 'base64')).isSealed(v))).toEqual([true, true]);

  // The same secret as before, through the gateway.
  webhook = await webhookService(dataDir, sealing);
  const gw = await gateway(webhook, master);
  const res = await call(gw, 'GET', `/webhook-subscriptions/${clear.id}`, { apiKey });
  expect([res.status, res.json.secret]).toEqual([200, clear.secret]);
});

const run = promisify(execFile);
/** `npm run admin -- reseal-secrets` against a gateway's admin listener. */
async function resealSecrets(gw: GatewayHandle): Promise<{
  apiKeys: { accounts: number; resealed: number; failed: string[] };
  webhookSecrets: { subscriptions: number; resealed: number; failed: string[] };
  dkimKeys: { domains: number; resealed: number; failed: string[] };
}> {
  const { stdout } = await run(process.execPath, [path.join(repoRoot, 'scripts/admin.js'), 'reseal-secrets'], { env: { ...process.env, ADMIN_URL: gw.adminUrl, ADMIN_TOKEN } });
  return JSON.parse(stdout);
}

it('rotating API_KEY_MASTER_KEY and SECRET_SEALING_KEY: with the old values in *_PREVIOUS everything works and is re-sealed on use; reseal-secrets does the rest; then the old values can go', async () => {
  const dataDir = tempDir();
  const [oldMaster, newMaster, oldSealing, newSealing] = [key(), key(), key(), key()];
  let webhook = await webhookService(dataDir, oldSealing);
  let gw = await gateway(webhook, oldMaster);
  const used = await createAccount(gw, 'used after the rotation');
  const idle = await createAccount(gw, 'idle');
  const secretOf: Record<string, { id: string; secret: string }> = {};
  for (const a of [used, idle]) secretOf[a.accountId] = (await call(gw, 'POST', '/webhook-subscriptions', { apiKey: a.apiKey, body: subscriptionBody })).json;
  await gw.stop();
  await webhook.stop();

  webhook = await webhookService(dataDir, newSealing, [oldSealing]);
  const messaging = await messagingService(dataDir, newSealing, [oldSealing]);
  gw = await gateway(webhook, newMaster, [oldMaster], messaging);
  const get = (a: { apiKey: string; accountId: string }) => call(gw, 'GET', `/webhook-subscriptions/${secretOf[a.accountId].id}`, { apiKey: a.apiKey });
  const used1 = await get(used);
  expect([used1.status, used1.json.secret]).toEqual([200, secretOf[used.accountId].secret]);
  // Used: re-sealed and re-indexed under the new master key.
  const accountsKv: KV = await nc.jetstream().views.kv('gateway-accounts');
  const record = JSON.parse(new TextDecoder().decode((await accountsKv.get(`account.${used.accountId}`))!.value));
  expect(record.apiKey.lookupHash).toBe(createKeyCrypto(newMaster).lookupHash(used.apiKey));

  const first = await resealSecrets(gw);
  expect(first.apiKeys).toEqual({ accounts: 2, resealed: 1, failed: [] }); // the idle account's key
  expect(first.webhookSecrets).toMatchObject({ subscriptions: 2, failed: [] }); // (the start may have re-sealed them already)
  // (No sending domain here: their keys' rotation, with mail, is dkim-key-rotation.int.test.ts.)
  expect(await resealSecrets(gw)).toEqual({ apiKeys: { accounts: 2, resealed: 0, failed: [] }, webhookSecrets: { subscriptions: 2, resealed: 0, failed: [] }, dkimKeys: { domains: 0, resealed: 0, failed: [] } });
  await gw.stop();
  await webhook.stop();

  // The previous values removed: every key and secret still works, unchanged.
  webhook = await webhookService(dataDir, newSealing);
  gw = await gateway(webhook, newMaster);
  for (const a of [used, idle]) {
    const res = await get(a);
    expect([res.status, res.json.secret]).toEqual([200, secretOf[a.accountId].secret]);
  }
});

it('the key lookup binds the account: a lookup hash grafted onto another account in the KV authenticates nobody', async () => {
  const webhook = await webhookService(tempDir(), key());
  const master = key();
  const gw = await gateway(webhook, master);
  const victim = await createAccount(gw, 'victim');
  const attacker = await createAccount(gw, 'attacker');
  expect((await call(gw, 'POST', '/webhook-subscriptions', { apiKey: victim.apiKey, body: subscriptionBody })).status).toBe(201);
  const mine = await call(gw, 'GET', '/webhook-subscriptions', { apiKey: attacker.apiKey });
  expect([mine.status, mine.json.items]).toEqual([200, []]);

  // With write access to the bucket: the attacker's key indexed to the victim, the victim's record
  // holding the attacker's lookup hash and sealed copy, the attacker's own record without a key.
  const kv: KV = await nc.jetstream().views.kv('gateway-accounts');
  const read = async (k: string) => JSON.parse(new TextDecoder().decode((await kv.get(k))!.value));
  const put = (k: string, v: unknown) => kv.put(k, new TextEncoder().encode(JSON.stringify(v)));
  const attackerRecord = await read(`account.${attacker.accountId}`);
  await put(`apikey.${attackerRecord.apiKey.lookupHash}`, { accountId: victim.accountId });
  await put(`account.${victim.accountId}`, { ...(await read(`account.${victim.accountId}`)), apiKey: attackerRecord.apiKey });
  await put(`account.${attacker.accountId}`, { ...attackerRecord, apiKey: null });

  // Until the gateway's copy of the bucket has the graft, the key is still the attacker's own; then it is refused.
  const deadline = Date.now() + 10_000;
  let res = await call(gw, 'GET', '/webhook-subscriptions', { apiKey: attacker.apiKey });
  while (res.status === 200 && res.json.items.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    res = await call(gw, 'GET', '/webhook-subscriptions', { apiKey: attacker.apiKey });
  }
  expect([res.status, res.json.errorId]).toEqual([401, 'api_key_invalid']);
  // A replica that never saw the key before (no cached owner) refuses it too.
  const fresh = await gateway(webhook, master);
  const again = await call(fresh, 'GET', '/webhook-subscriptions', { apiKey: attacker.apiKey });
  expect([again.status, again.json.errorId]).toEqual([401, 'api_key_invalid']);
});
