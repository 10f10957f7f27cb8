// The confirm use case on a real embedded store (submissions, forms): which outcome each link gets
// and what it records. The subscriber service's ConfirmSubscriber is given as its answers here (the
// real one is in gateway/test/confirm.int.test.ts); the cases the end-to-end test cannot produce
// at will are here: a submission not decided yet (pending), the second confirmation recording
// nothing new.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { confirmationPageOf, confirmSubscription, type ConfirmDeps } from '../src/app/confirm-subscription';
import { confirmTokens } from '../src/app/confirm-token';
import { formRepository } from '../src/store/forms';
import { submissionRepository, type SubmissionDoc } from '../src/store/submissions';
import { formFixture } from './support/form-fixture';

const A = crypto.randomUUID();
const FORM = crypto.randomUUID();
const NOW = new Date('2026-11-24T10:00:00Z');
let dir: string;
let store: Store;
let deps: ConfirmDeps;
let statuses: Map<string, string>;
let calls: string[];
const tokens = confirmTokens({ PUBLIC_BASE_URL: 'https://x.test', TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), TRACKING_SECRET_PREVIOUS: [] });
const tokenOf = (submissionId: string, expiresAt = new Date(NOW.getTime() + 86_400_000)) => tokens.url(A, submissionId, expiresAt).split('/').pop()!;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confirm-'));
  store = await openStore({ dataDir: dir });
  statuses = new Map();
  calls = [];
  deps = {
    tokens,
    submissions: submissionRepository(store),
    forms: formRepository(store),
    confirmations: {
      async confirm(_accountId, subscriberId) {
        calls.push(subscriberId);
        const before = statuses.get(subscriberId) ?? 'UNCONFIRMED';
        const after = before === 'UNCONFIRMED' ? 'ACTIVE' : before;
        statuses.set(subscriberId, after);
        return { status: after, previousStatus: before };
      },
    },
    // The account records are the gateway's (NATS KV); the real read is in gateway/test/confirm.int.test.ts.
    accounts: { nameOf: async (accountId) => (accountId === A ? 'The Shop' : null) },
    now: () => NOW,
  };
  await formRepository(store).create(formFixture(FORM, A, { name: 'News' }));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function submission(subscriberId: string | null): Promise<SubmissionDoc> {
  const doc: SubmissionDoc = {
    _id: crypto.randomUUID(), accountId: A, formId: FORM, email: 'ann@example.org', values: {}, consent: null, clientAddress: '127.0.0.1',
    submittedAt: NOW, decision: subscriberId ? 'QUEUED' : null, subscriberId, confirmationSentAt: subscriberId ? NOW : null, processedAt: subscriberId ? NOW : null,
  };
  await store.transaction((tx) => submissionRepository(store).insert(doc, tx));
  return doc;
}

it('GET shows the page and calls nothing; POST confirms and records confirmedAt once; twice is confirmed again', async () => {
  const s = await submission('sub-1');
  expect(await confirmationPageOf(deps, tokenOf(s._id))).toEqual({ kind: 'ready', formName: 'News', accountName: 'The Shop', expiresAt: new Date(NOW.getTime() + 86_400_000) });
  expect(calls).toEqual([]);
  expect(await confirmSubscription(deps, tokenOf(s._id))).toEqual({ kind: 'confirmed', formName: 'News', accountName: 'The Shop' });
  expect((await submissionRepository(store).get(A, s._id))?.confirmedAt).toEqual(NOW);
  deps.now = () => new Date(NOW.getTime() + 60_000);
  expect(await confirmSubscription(deps, tokenOf(s._id))).toEqual({ kind: 'confirmed', formName: 'News', accountName: 'The Shop' });
  expect((await submissionRepository(store).get(A, s._id))?.confirmedAt).toEqual(NOW); // the first time only
  expect(calls).toEqual(['sub-1', 'sub-1']);
});

it('a submission the job has not decided yet is pending (503), and nothing is called', async () => {
  const s = await submission(null);
  expect(await confirmSubscription(deps, tokenOf(s._id))).toEqual({ kind: 'pending', formName: 'News' });
  expect(calls).toEqual([]);
});

it('refused for a subscriber that is not UNCONFIRMED or ACTIVE; expired; invalid for an unknown submission or a bad token', async () => {
  const s = await submission('sub-2');
  statuses.set('sub-2', 'BLOCKED');
  expect(await confirmSubscription(deps, tokenOf(s._id))).toEqual({ kind: 'refused', formName: 'News', status: 'BLOCKED' });
  expect((await submissionRepository(store).get(A, s._id))?.confirmedAt).toBeNull();
  expect(await confirmSubscription(deps, tokenOf(s._id, new Date(NOW.getTime() - 1000)))).toEqual({ kind: 'expired', formName: 'News' });
  expect(await confirmationPageOf(deps, tokenOf(crypto.randomUUID()))).toEqual({ kind: 'invalid' });
  expect(await confirmSubscription(deps, 'not-a-token')).toEqual({ kind: 'invalid' });
});
