// Use cases of app/submissions.ts on a real embedded store: a reader's submission is stored with its
// job in one transaction (both or neither), a refused one stores nothing, only an ACTIVE form takes
// submissions, and the submissions log is the account's own.
import crypto from 'node:crypto';
import { DomainError } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { acceptSubmission, listSubmissions, openForm, type AcceptSubmissionDeps } from '../src/app/submissions';
import type { Form } from '../src/domain/form';
import { formRepository, type FormRepository } from '../src/store/forms';
import { submissionRepository, type SubmissionRepository } from '../src/store/submissions';
import { formFixture } from './support/form-fixture';

const NOW = new Date('2026-11-24T08:00:00.000Z');
let tmp: TempStore;
let forms: FormRepository;
let submissions: SubmissionRepository;
let notified: number;
let deps: AcceptSubmissionDeps;
let form: Form;

beforeEach(async () => {
  tmp = await openTempStore('form-submissions');
  forms = formRepository(tmp.store);
  submissions = submissionRepository(tmp.store);
  notified = 0;
  deps = { store: tmp.store, submissions, outbox: outboxRepository(tmp.store), notifyOutbox: () => void notified++, now: () => NOW, newId: () => crypto.randomUUID() };
  form = formFixture(crypto.randomUUID(), crypto.randomUUID());
  await forms.create(form);
});
afterEach(() => tmp.close());

const jobs = () => tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({});
const errorOf = (p: Promise<unknown>) => p.then(() => Promise.reject(new Error('no error')), (err: unknown) => err as DomainError);

it('stores an accepted submission with its job, in one transaction, and wakes the outbox', async () => {
  const { submissionId } = await acceptSubmission(deps, { form, body: { values: { email: 'Ann@Example.com' }, consent: { text: 'Yes, mail me' } }, clientAddress: '203.0.113.9' });

  const stored = await submissions.get(form.accountId, submissionId);
  expect(stored).toMatchObject({ formId: form.id, email: 'ann@example.com', clientAddress: '203.0.113.9', submittedAt: NOW, consent: { text: 'Yes, mail me', givenAt: NOW }, decision: null, processedAt: null });
  const [job, ...more] = await jobs();
  expect(more).toEqual([]);
  expect(job).toMatchObject({ _id: submissionId, payload: { accountId: form.accountId, submissionId } });
  expect(job.subject).toMatch(/form-submission/);
  expect(notified).toBe(1);
});

it('refuses a submission that does not fit the form with details, and stores nothing', async () => {
  const err = await errorOf(acceptSubmission(deps, { form, body: { values: { email: 'not an address' } }, clientAddress: '203.0.113.9' }));
  expect(err).toBeInstanceOf(DomainError);
  expect(err.errorId).toBe('validation_failed');
  expect(err.details?.length).toBeGreaterThan(0);
  expect((await listSubmissions({ forms, submissions }, form.accountId, form.id, { pageNumber: 1, pageSize: 10 })).totalItems).toBe(0);
  expect(await jobs()).toEqual([]);
  expect(notified).toBe(0);
});

it('stores neither the submission nor its job when the job cannot be recorded', async () => {
  const failing = { ...deps, outbox: { record: async () => Promise.reject(new Error('outbox down')) } };
  await expect(acceptSubmission(failing, { form, body: { values: { email: 'ann@example.com' } }, clientAddress: '' })).rejects.toThrow('outbox down');
  expect((await listSubmissions({ forms, submissions }, form.accountId, form.id, { pageNumber: 1, pageSize: 10 })).totalItems).toBe(0);
  expect(notified).toBe(0);
});

it('opens an ACTIVE form of any account by its id, whatever its case; 404 for a missing, malformed or inactive one', async () => {
  expect((await openForm({ forms }, form.id.toUpperCase())).id).toBe(form.id);
  expect((await errorOf(openForm({ forms }, crypto.randomUUID()))).errorId).toBe('form_not_found');
  expect((await errorOf(openForm({ forms }, 'x'.repeat(36)))).errorId).toBe('form_not_found');
  const inactive = formFixture(crypto.randomUUID(), form.accountId, { status: 'INACTIVE' });
  await forms.create(inactive);
  expect((await errorOf(openForm({ forms }, inactive.id))).errorId).toBe('form_inactive');
});

it("lists a form's submissions newest first, filtered by decision; another account's form is not found", async () => {
  const first = await acceptSubmission({ ...deps, now: () => new Date(NOW.getTime() - 1000) }, { form, body: { values: { email: 'a@example.com' } }, clientAddress: '' });
  const second = await acceptSubmission(deps, { form, body: { values: { email: 'b@example.com' } }, clientAddress: '' });
  const page = await listSubmissions({ forms, submissions }, form.accountId, form.id, { pageNumber: 1, pageSize: 10 });
  expect(page.items.map((s) => s._id)).toEqual([second.submissionId, first.submissionId]);
  expect(page.totalItems).toBe(2);
  expect((await listSubmissions({ forms, submissions }, form.accountId, form.id, { decision: 'QUEUED', pageNumber: 1, pageSize: 10 })).totalItems).toBe(0);

  const other = crypto.randomUUID();
  expect((await errorOf(listSubmissions({ forms, submissions }, other, form.id, { pageNumber: 1, pageSize: 10 }))).errorId).toBe('form_not_found');
  expect((await errorOf(listSubmissions({ forms, submissions }, form.accountId, 'x'.repeat(101), { pageNumber: 1, pageSize: 10 }))).errorId).toBe('form_not_found');
});
