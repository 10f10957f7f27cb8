// The account quotas of public submissions (operator settings FORM_ACCOUNT_SUBSCRIBER_LIMIT and
// FORM_ACCOUNT_DAILY_CONFIRMATIONS, set low here) through the real gateway and services, and a
// kill -9 of the form service between a submission's 202 and its decision: the submission is
// still decided, exactly once (one decision, one form.submitted fact, one subscriber).
import { startCaptureRelay, waitFor, waitForSettled, type CaptureRelay } from '@mailer/testing';
import { eventsOf } from '@mailer/testing/subscriber';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(180_000);

let env: FormStack;
let relay: CaptureRelay;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startFormStack({
    gatewayEnv: { GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    formEnv: { FORM_ACCOUNT_SUBSCRIBER_LIMIT: '3', FORM_ACCOUNT_DAILY_CONFIRMATIONS: '2' },
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
  });
}, 180_000);

afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

/** An account with a default sender profile (the confirmation mail's From). */
async function account(name: string): Promise<Api> {
  const api = await env.account(name);
  expectStatus(await api.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' }), 201);
  return api;
}

const EMAIL = { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true };
const createForm = async (api: Api, extra: Record<string, unknown> = {}) =>
  expectStatus(await api.post('/forms', { name: 'Quota form', type: 'DEFAULT', inputFields: [EMAIL], ...extra }), 201);

async function submit(formId: string, email: string): Promise<number> {
  const res = await fetch(`${env.gw.url}/public/forms/${formId}/submissions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ values: { email } }),
  });
  await res.text();
  return res.status;
}

async function decided(api: Api, formId: string, count: number, timeoutMs = 60_000): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return waitFor(`${count} submissions of ${formId} decided`, async () => {
    const { items } = expectStatus(await api.get(`/forms/${formId}/submissions?pageSize=1000`), 200);
    return items.length >= count && items.every((i: { processedAt: string | null }) => i.processedAt !== null) && items;
  }, timeoutMs);
}

/** Submits one address and waits for its decision (submissions are decided one by one, in order). */
async function decisionOf(api: Api, formId: string, email: string): Promise<string | null> {
  const before = expectStatus(await api.get(`/forms/${formId}/submissions`), 200).totalItems;
  expect(await submit(formId, email)).toBe(202);
  return (await decided(api, formId, before + 1))[0].decision;
}

test("the account's daily confirmation quota: SUPPRESSED_CUSTOMER_LIMIT once 2 mails went out today; another account is not affected", async () => {
  const a = await account('quota-mails-a');
  const b = await account('quota-mails-b');
  const form = await createForm(a);
  expect(await decisionOf(a, form.id, 'one@example.org')).toBe('QUEUED');
  expect(await decisionOf(a, form.id, 'two@example.org')).toBe('QUEUED');
  expect(await decisionOf(a, form.id, 'three@example.org')).toBe('SUPPRESSED_CUSTOMER_LIMIT');
  // The subscriber exists, UNCONFIRMED, without a mail: a later submission (tomorrow) can confirm it.
  expect(expectStatus(await a.get('/subscribers/by-email/three@example.org'), 200).subscriberStatus).toBe('UNCONFIRMED');
  expect(await decisionOf(b, (await createForm(b)).id, 'one@example.org')).toBe('QUEUED');
  // Mails: one@ twice (accounts a and b), two@ once, three@ never.
  await env.settled();
  expect(['one', 'two', 'three'].map((name) => relay.receivedFor(`${name}@example.org`).length)).toEqual([2, 1, 0]);
});

test("the account's subscriber quota: SUPPRESSED_SUBSCRIBER_LIMIT for a new address once 3 subscribers exist; known addresses still decide", async () => {
  const a = await account('quota-subscribers');
  for (const email of ['s1@example.org', 's2@example.org', 's3@example.org']) expectStatus(await a.post('/subscribers', { email }), 201);
  const form = await createForm(a, { doubleOptIn: false });
  const items = await (async () => {
    expect(await submit(form.id, 'newcomer@example.org')).toBe(202);
    return decided(a, form.id, 1);
  })();
  expect([items[0].decision, items[0].subscriberId]).toEqual(['SUPPRESSED_SUBSCRIBER_LIMIT', null]);
  expect((await a.get('/subscribers/by-email/newcomer@example.org')).status).toBe(404);
  expect(await decisionOf(a, form.id, 's1@example.org')).toBeNull();
});

test('kill -9 of the form service between the 202 and the decision: the submission is decided once after the restart', async () => {
  const a = await account('kill9');
  const form = await createForm(a);
  // The subscriber service is frozen, so the job cannot decide before the kill.
  process.kill(env.subscriber.pid, 'SIGSTOP');
  try {
    expect(await submit(form.id, 'survivor@example.org')).toBe(202);
    // the job is in work (delivered to the form service, which waits for the frozen subscriber service)
    const jsm = await env.stack.nc.jetstreamManager();
    await waitFor('the submission job in work', async () => (await jsm.consumers.info('JOBS', 'form-submission-decisions')).num_ack_pending === 1, 20_000);
    const pending = expectStatus(await a.get(`/forms/${form.id}/submissions`), 200).items;
    expect(pending.map((i: { processedAt: string | null }) => i.processedAt)).toEqual([null]);
    await env.restartFormAfterKill9();
  } finally {
    process.kill(env.subscriber.pid, 'SIGCONT');
  }
  const [item] = await decided(a, form.id, 1, 120_000);
  expect(item.decision).toBe('QUEUED');
  // Every delivery of the job handled (the one to the killed process comes back after the ack wait), then count: one fact, one subscriber, one decided submission.
  await waitForSettled(env.stack.nc, { outboxes: env.mesh.outboxes(), timeoutMs: 90_000 });
  const facts = await eventsOf(env.stack.nc, a.accountId, (e) => e.some((f) => f.type === 'form.submitted'));
  expect(facts.filter((f) => f.type === 'form.submitted').map((f) => [f.submissionId, f.decision])).toEqual([[item.submissionId, 'QUEUED']]);
  expect(facts.filter((f) => f.type === 'subscriber.created')).toHaveLength(1);
  expect(expectStatus(await a.get(`/forms/${form.id}/submissions`), 200).totalItems).toBe(1);
  // One confirmation mail, even if the job ran twice around the kill.
  expect(relay.receivedFor('survivor@example.org')).toHaveLength(1);
});
