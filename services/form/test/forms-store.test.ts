// The forms repository on the embedded store: account scoping, the installation-wide uniqueness of a
// landing page's domain + routePath (a unique index, so it holds whatever requests race), the
// cross-account page lookup, reference counts and the field usage queries.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { formRepository, RoutePathTakenError, type FormRepository } from '../src/store/forms';
import { customInput, emailInput, formFixture } from './support/form-fixture';

const FIELD = '5b0e8a2c-6d1f-4c3a-9e7b-2f4d6a8c0e1b';
let dir: string;
let store: Store;
let forms: FormRepository;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forms-store-'));
  store = await openStore({ dataDir: dir });
  forms = formRepository(store);
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const page = (id: string, accountId: string, routePath: string, domain: string | null = null) => formFixture(id, accountId, { type: 'PAGE', routePath, domain });

it('scopes get, list, update and delete to the account', async () => {
  await forms.create(formFixture('f-1', 'acc-1', { inputFields: [emailInput(), customInput(FIELD, 1)] }));
  expect((await forms.get('acc-1', 'f-1'))?.inputFields.map((f) => f.fieldId)).toEqual(['EMAIL', FIELD]);
  expect(await forms.get('acc-2', 'f-1')).toBeNull();
  expect(await forms.list('acc-2')).toEqual([]);
  const form = (await forms.get('acc-1', 'f-1'))!;
  const changes = { ...form, name: 'renamed', updatedAt: new Date() };
  expect(await forms.update('acc-2', 'f-1', changes)).toBeNull();
  expect(await forms.delete('acc-2', 'f-1')).toBe(false);
  expect((await forms.update('acc-1', 'f-1', changes))?.name).toBe('renamed');
  expect(await forms.delete('acc-1', 'f-1')).toBe(true);
  expect(await forms.get('acc-1', 'f-1')).toBeNull();
});

it('refuses a taken routePath on the same domain across accounts, on create and on update', async () => {
  await forms.create(page('p-1', 'acc-1', 'join'));
  await expect(forms.create(page('p-2', 'acc-2', 'join'))).rejects.toBeInstanceOf(RoutePathTakenError);
  await forms.create(page('p-3', 'acc-2', 'join', 'shop.example.com')); // another domain: free
  await forms.create(page('p-4', 'acc-2', 'other'));
  const p4 = (await forms.get('acc-2', 'p-4'))!;
  await expect(forms.update('acc-2', 'p-4', { ...p4, routePath: 'join' })).rejects.toBeInstanceOf(RoutePathTakenError);
  // forms without a routePath never collide
  await forms.create(formFixture('d-1', 'acc-1'));
  await forms.create(formFixture('d-2', 'acc-1'));
  // a deleted page frees its path
  await forms.delete('acc-1', 'p-1');
  await forms.create(page('p-5', 'acc-2', 'join'));
});

it('finds a published page across accounts by domain and routePath only while PUBLISHED', async () => {
  await forms.create(page('p-1', 'acc-1', 'join'));
  await forms.create(page('p-2', 'acc-2', 'join', 'shop.example.com'));
  expect(await forms.publishedPageAcrossAccounts(null, 'join')).toBeNull(); // DRAFT
  const published = await forms.setState('acc-1', 'p-1', { landingPageStatus: 'PUBLISHED', updatedAt: new Date() }, { landingPageStatus: 'DRAFT' });
  expect(published?.landingPageStatus).toBe('PUBLISHED');
  // the guard: a second transition from DRAFT finds nothing
  expect(await forms.setState('acc-1', 'p-1', { landingPageStatus: 'PUBLISHED', updatedAt: new Date() }, { landingPageStatus: 'DRAFT' })).toBeNull();
  expect((await forms.publishedPageAcrossAccounts(null, 'join'))?.id).toBe('p-1');
  expect(await forms.publishedPageAcrossAccounts('shop.example.com', 'join')).toBeNull();
  await forms.setState('acc-2', 'p-2', { landingPageStatus: 'PUBLISHED', updatedAt: new Date() });
  expect((await forms.publishedPageAcrossAccounts('SHOP.example.com', 'join'))?.id).toBe('p-2');
  expect((await forms.getAcrossAccounts('p-2'))?.accountId).toBe('acc-2');
});

it('counts the forms naming a sender profile or a template, per account', async () => {
  await forms.create(formFixture('f-1', 'acc-1', { senderProfileId: 'sp-1', confirmationTemplateName: 'confirm' }));
  await forms.create(formFixture('f-2', 'acc-1', { senderProfileId: 'sp-1' }));
  expect(await forms.referencing('acc-1', { senderProfileId: 'sp-1' })).toEqual({ count: 2, forms: [{ id: 'f-1', name: 'form f-1' }, { id: 'f-2', name: 'form f-2' }] });
  expect(await forms.referencing('acc-1', { senderProfileId: 'sp-1' }, 1)).toEqual({ count: 2, forms: [{ id: 'f-1', name: 'form f-1' }] });
  expect((await forms.referencing('acc-1', { templateName: 'confirm' })).count).toBe(1);
  expect((await forms.referencing('acc-2', { senderProfileId: 'sp-1' })).count).toBe(0);
});

it('lists the forms using a field and drops the field\'s input when it is removed', async () => {
  await forms.create(formFixture('f-1', 'acc-1', { inputFields: [emailInput(), customInput(FIELD.toUpperCase(), 1)] }));
  expect((await forms.usingField('acc-1', FIELD)).map((f) => f.id)).toEqual(['f-1']);
  expect(await forms.removeField('acc-1', FIELD)).toBe(1);
  expect((await forms.get('acc-1', 'f-1'))?.inputFields.map((f) => f.fieldId)).toEqual(['EMAIL']);
  expect(await forms.usingField('acc-1', FIELD)).toEqual([]);
});
