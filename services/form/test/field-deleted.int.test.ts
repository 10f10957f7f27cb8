// The form service as a real process on a real nats-server: ListFieldUsages over gRPC lists the forms
// in its store, and a `field.deleted` fact on DOMAIN makes the forms stop collecting that field
// (a malformed fact before it is terminated, not retried forever in front of it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { publish } from '@mailer/nats';
import { domainFact } from '@mailer/nats/facts';
import { commonV1 } from '@mailer/proto';
import { openStore } from '@mailer/store';
import { startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { formRepository } from '../src/store/forms';
import { customInput, emailInput, formFixture } from './support/form-fixture';

const FIELD = '5b0e8a2c-6d1f-4c3a-9e7b-2f4d6a8c0e1b';
const OTHER = '9c1d3e5f-7a2b-4c6d-8e0f-1a3b5c7d9e2f';

let dataDir: string;
let nats: NatsServerHandle;
let svc: RunningService;
let nc: NatsConnection;
let client: ReturnType<typeof createClient<commonV1.FieldUsageServiceClient>>;

beforeAll(async () => {
  // The forms exist before the service starts: written straight to its data directory.
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'form-int-'));
  const store = await openStore({ dataDir: path.join(dataDir, 'form') });
  const forms = formRepository(store);
  const form = (id: string, accountId: string, fieldIds: string[]) =>
    formFixture(id, accountId, { inputFields: [emailInput(), ...fieldIds.map((f, i) => customInput(f, i + 1))] });
  await forms.create(form('f-1', 'acc-1', [OTHER, FIELD]));
  await forms.create(form('f-2', 'acc-2', [FIELD]));
  await store.close();
  nats = await startNatsServer();
  svc = await startService('form', { NATS_URL: nats.url, DATA_DIR: dataDir });
  nc = await connect({ servers: nats.url, ...nats.auth });
  client = createClient(commonV1.FieldUsageServiceClient, svc.address, 10_000);
}, 60_000);

afterAll(async () => {
  client?.close();
  await nc?.close();
  await svc?.stop();
  await nats?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const usagesOf = async (accountId: string) => (await client.listFieldUsages({ accountId, fieldId: FIELD, personalizationTagName: '' })).usages.map((u) => u.artifactId);

it('lists the forms collecting a field until a field.deleted fact removes it from the account\'s forms', async () => {
  expect(await usagesOf('acc-1')).toEqual(['f-1']);
  const js = nc.jetstream();
  await publish(js, 'domain.field.deleted', { type: 'field.deleted', accountId: 'acc-1' }); // no field: terminated
  const field = { id: FIELD, label: 'Plan', personalizationTagName: 'plan', fieldType: 'TEXT' as const, required: false, internal: false, active: false, position: 3, options: [] };
  const fact = domainFact({ type: 'field.deleted', accountId: 'acc-1', occurredAt: new Date().toISOString(), field, removedFromSubscribers: 0 });
  await publish(js, fact.subject, fact.payload);
  const deadline = Date.now() + 20_000;
  while ((await usagesOf('acc-1')).length > 0) {
    if (Date.now() > deadline) throw new Error('the form still collects the deleted field');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(await usagesOf('acc-2')).toEqual(['f-2']); // another account's field of the same id is untouched
  expect(svc.output()).toContain('terminating a malformed field.deleted fact');
});
