// Use case DecideSubmission (app/decide-submission.ts), every branch, on a real embedded store with the
// real peers: the subscriber service (Signup) and the messaging service (suppression list, the
// confirmation mail, delivered to a capture relay). A peer that does not answer is a real client of an
// address where nothing listens. What the reader and the integrator notice: the decision recorded once
// with its form.submitted fact, the subscriber, and at most one confirmation mail, whatever fails.
import crypto from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { createClient, PeerUnavailable } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { senderProfilesV1, subscriberV1, suppressionsV1 } from '@mailer/proto';
import { freePort, outboxOf, refusal, startCaptureRelay, startNatsServer, startService, waitForSettled, type CaptureRelay, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { addReq } from '@mailer/testing/subscriber';
import { confirmTokens } from '../src/app/confirm-token';
import { confirmationMailer } from '../src/app/confirmation-mail';
import { decideSubmission, formSubmittedFactId, type DecideSubmissionDeps } from '../src/app/decide-submission';
import { emailSender } from '../src/clients/email-messages';
import { signupPeers, type SignupPeers } from '../src/clients/signup';
import { formRepository } from '../src/store/forms';
import { submissionRepository, type SubmissionDoc } from '../src/store/submissions';
import { formFixture } from './support/form-fixture';

jest.setTimeout(120_000);

let nats: NatsServerHandle;
let nc: NatsConnection;
let relay: CaptureRelay;
let subscriber: RunningService;
let messaging: RunningService;
let tmp: TempStore;
let peers: SignupPeers;
let nowhere: string;
const closers: Array<() => void> = [];

const tokens = confirmTokens({ PUBLIC_BASE_URL: 'https://mail.forms.test', TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), TRACKING_SECRET_PREVIOUS: [] });
const mailer = (messagingAddress: string) => {
  const sender = emailSender(messagingAddress, 10_000);
  closers.push(() => sender.close());
  return confirmationMailer({ tokens, sender, tokenDays: 7, now: () => new Date() });
};

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  relay = await startCaptureRelay();
  subscriber = await startService('subscriber', { NATS_URL: nats.url });
  messaging = await startService('messaging', { NATS_URL: nats.url, SMTP_URL: relay.url, SUBSCRIBER_GRPC_ADDR: subscriber.address });
  peers = signupPeers({ subscriber: subscriber.address, messaging: messaging.address }, 10_000);
  nowhere = `127.0.0.1:${await freePort()}`;
});
afterAll(async () => {
  peers?.close();
  closers.forEach((close) => close());
  await messaging?.stop();
  await subscriber?.stop();
  await relay?.close();
  await nc?.close();
  await nats?.stop();
});
beforeEach(async () => {
  tmp = await openTempStore('decide');
});
afterEach(() => tmp.close());

function deps(over: Partial<DecideSubmissionDeps> = {}): DecideSubmissionDeps {
  return {
    store: tmp.store,
    forms: formRepository(tmp.store),
    submissions: submissionRepository(tmp.store),
    outbox: outboxRepository(tmp.store),
    notifyOutbox: () => undefined,
    peers,
    sendConfirmationMail: mailer(messaging.address),
    now: () => new Date(),
    limits: { subscriberLimit: 1000, dailyConfirmations: 1000 },
    ...over,
  };
}

/** A new account with a sender profile (the confirmation mail's sender) and an active double opt-in form. */
async function account(formOver: Parameters<typeof formFixture>[2] = {}) {
  const accountId = crypto.randomUUID();
  const profiles = createClient(senderProfilesV1.SenderProfileServiceClient, messaging.address, 10_000);
  try {
    await profiles.createSenderProfile({ accountId, profile: { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' } });
  } finally {
    profiles.close();
  }
  const form = formFixture(crypto.randomUUID(), accountId, formOver);
  await formRepository(tmp.store).create(form);
  return { accountId, form };
}

/** A stored, undecided submission of the form (as the public route stores it with its job). */
async function submitted(accountId: string, formId: string | null, email = `r-${crypto.randomUUID()}@example.org`): Promise<SubmissionDoc> {
  const doc: SubmissionDoc = {
    _id: crypto.randomUUID(), accountId, formId, email, values: { email }, consent: null, clientAddress: '192.0.2.1',
    submittedAt: new Date(), decision: null, subscriberId: null, confirmationSentAt: null, processedAt: null,
  };
  expect(await submissionRepository(tmp.store).insertIfAbsent(doc)).toBe(true);
  return doc;
}

const stored = (s: SubmissionDoc) => submissionRepository(tmp.store).get(s.accountId, s._id);
const facts = () => tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({});
async function subscriberOf(accountId: string, email: string) {
  const client = createClient(subscriberV1.SubscriberServiceClient, subscriber.address, 10_000);
  try {
    return (await client.getSubscriberByEmail({ accountId, email })).subscriber;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return null; // NOT_FOUND
    throw err;
  } finally {
    client.close();
  }
}
/** Every mail to `email`, once every job of the messaging service is done. */
async function mailsTo(email: string) {
  await waitForSettled(nc, { outboxes: [outboxOf(messaging), outboxOf(subscriber)] });
  return relay.receivedFor(email);
}

it('QUEUED: the subscriber signed up UNCONFIRMED, one confirmation mail, the decision and its fact recorded once; decided again: ALREADY_DECIDED, nothing more', async () => {
  const { accountId, form } = await account();
  const s = await submitted(accountId, form.id);
  expect(await decideSubmission(deps(), { accountId, submissionId: s._id })).toEqual({ outcome: 'DECIDED', decision: 'QUEUED' });
  const after = (await stored(s))!;
  expect(after).toMatchObject({ decision: 'QUEUED', processedAt: expect.any(Date), confirmationSentAt: expect.any(Date) });
  expect(await subscriberOf(accountId, s.email)).toMatchObject({ id: after.subscriberId, subscriberStatus: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNCONFIRMED });
  expect(await facts()).toEqual([expect.objectContaining({ _id: formSubmittedFactId(s._id), subject: 'domain.form.submitted', payload: expect.objectContaining({ submissionId: s._id, decision: 'QUEUED' }) })]);

  expect(await decideSubmission(deps(), { accountId, submissionId: s._id })).toEqual({ outcome: 'ALREADY_DECIDED' });
  expect(await facts()).toHaveLength(1);
  expect(await mailsTo(s.email)).toHaveLength(1);
});

it('an unknown submission, a deleted form and a submission without form are UNKNOWN_SUBMISSION: nobody is signed up, nothing recorded', async () => {
  const { accountId, form } = await account();
  expect(await decideSubmission(deps(), { accountId, submissionId: crypto.randomUUID() })).toEqual({ outcome: 'UNKNOWN_SUBMISSION' });
  const orphan = await submitted(accountId, form.id);
  await formRepository(tmp.store).delete(accountId, form.id);
  expect(await decideSubmission(deps(), { accountId, submissionId: orphan._id })).toEqual({ outcome: 'UNKNOWN_SUBMISSION' });
  const formless = await submitted(accountId, null);
  expect(await decideSubmission(deps(), { accountId, submissionId: formless._id })).toEqual({ outcome: 'UNKNOWN_SUBMISSION' });
  // another account's submission id is unknown in this one
  const { accountId: other } = await account();
  expect(await decideSubmission(deps(), { accountId: other, submissionId: orphan._id })).toEqual({ outcome: 'UNKNOWN_SUBMISSION' });
  for (const s of [orphan, formless]) {
    expect(await stored(s)).toMatchObject({ decision: null, processedAt: null });
    expect(await subscriberOf(accountId, s.email)).toBeNull();
  }
  expect(await facts()).toEqual([]);
});

it('the messaging service not answering (suppression list): the job fails (retried later), nobody signed up, nothing recorded', async () => {
  const { accountId, form } = await account();
  const s = await submitted(accountId, form.id);
  const down = signupPeers({ subscriber: subscriber.address, messaging: nowhere }, 2_000);
  closers.push(() => down.close());
  const err = await refusal(decideSubmission(deps({ peers: down }), { accountId, submissionId: s._id }));
  expect(err).toBeInstanceOf(PeerUnavailable);
  expect(err.errorId).toBe('service_unavailable');
  expect(await stored(s)).toMatchObject({ decision: null, processedAt: null });
  expect(await subscriberOf(accountId, s.email)).toBeNull();
  expect(await facts()).toEqual([]);
});

it('the subscriber service not answering (Signup): the job fails, nothing recorded; retried with it back, decided once', async () => {
  const { accountId, form } = await account();
  const s = await submitted(accountId, form.id);
  const down = signupPeers({ subscriber: nowhere, messaging: messaging.address }, 2_000);
  closers.push(() => down.close());
  expect(await refusal(decideSubmission(deps({ peers: down }), { accountId, submissionId: s._id }))).toBeInstanceOf(PeerUnavailable);
  expect(await stored(s)).toMatchObject({ decision: null, processedAt: null });
  expect(await facts()).toEqual([]);
  expect(await decideSubmission(deps(), { accountId, submissionId: s._id })).toEqual({ outcome: 'DECIDED', decision: 'QUEUED' });
  expect(await mailsTo(s.email)).toHaveLength(1);
});

it('the confirmation mail cannot be queued (messaging down, or the form\'s template gone): the job fails after the signup and records nothing; the retry mails once', async () => {
  const { accountId, form } = await account();
  const s = await submitted(accountId, form.id);
  expect(await refusal(decideSubmission(deps({ sendConfirmationMail: mailer(nowhere) }), { accountId, submissionId: s._id }))).toBeInstanceOf(PeerUnavailable);
  // the job died between the signup and the record: the subscriber exists, the decision does not
  expect(await subscriberOf(accountId, s.email)).toMatchObject({ subscriberStatus: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNCONFIRMED });
  expect(await stored(s)).toMatchObject({ decision: null, processedAt: null });
  expect(await facts()).toEqual([]);
  // decided again from the same inputs (Signup is idempotent): QUEUED, one mail
  expect(await decideSubmission(deps(), { accountId, submissionId: s._id })).toEqual({ outcome: 'DECIDED', decision: 'QUEUED' });
  expect(await mailsTo(s.email)).toHaveLength(1);

  // a form whose confirmation template is gone (deleted since the form was saved): template_not_found, nothing recorded
  const own = formFixture(crypto.randomUUID(), accountId, { confirmationTemplateName: 'gone-since' });
  await formRepository(tmp.store).create(own);
  const t = await submitted(accountId, own.id);
  expect((await refusal(decideSubmission(deps(), { accountId, submissionId: t._id }))).errorId).toBe('template_not_found');
  expect(await stored(t)).toMatchObject({ decision: null, processedAt: null });
  expect(await mailsTo(t.email)).toHaveLength(0);
});

it('a suppressed address is SUPPRESSED_SUBSCRIBER_POLICY without a Signup; the subscriber limit reached is SUPPRESSED_SUBSCRIBER_LIMIT; neither mails', async () => {
  const { accountId, form } = await account();
  const suppressed = await submitted(accountId, form.id);
  const suppressions = createClient(suppressionsV1.SuppressionServiceClient, messaging.address, 10_000);
  closers.push(() => suppressions.close());
  await suppressions.addSuppression({ accountId, email: suppressed.email });
  expect(await decideSubmission(deps(), { accountId, submissionId: suppressed._id })).toEqual({ outcome: 'DECIDED', decision: 'SUPPRESSED_SUBSCRIBER_POLICY' });
  expect(await subscriberOf(accountId, suppressed.email)).toBeNull();

  // the account has 1 subscriber, its limit is 1: a new address is not signed up
  const subscribers = createClient(subscriberV1.SubscriberServiceClient, subscriber.address, 10_000);
  closers.push(() => subscribers.close());
  await subscribers.addSubscriber(addReq(accountId, `existing-${crypto.randomUUID()}@example.org`));
  const over = await submitted(accountId, form.id);
  expect(await decideSubmission(deps({ limits: { subscriberLimit: 1, dailyConfirmations: 1000 } }), { accountId, submissionId: over._id })).toEqual({ outcome: 'DECIDED', decision: 'SUPPRESSED_SUBSCRIBER_LIMIT' });
  expect(await stored(over)).toMatchObject({ decision: 'SUPPRESSED_SUBSCRIBER_LIMIT', subscriberId: null, confirmationSentAt: null });
  expect((await facts()).map((f) => (f.payload as { decision: string }).decision).sort()).toEqual(['SUPPRESSED_SUBSCRIBER_LIMIT', 'SUPPRESSED_SUBSCRIBER_POLICY']);
  expect(await mailsTo(suppressed.email)).toHaveLength(0);
  expect(relay.receivedFor(over.email)).toHaveLength(0);
});

it('two replicas deciding one submission at once: one records it (one fact), the other finds it decided; one mail', async () => {
  const { accountId, form } = await account();
  const s = await submitted(accountId, form.id);
  // A second copy of the module: its own turns, as in another process.
  let other!: typeof decideSubmission;
  jest.isolateModules(() => {
    other = (require('../src/app/decide-submission') as typeof import('../src/app/decide-submission')).decideSubmission; // eslint-disable-line @typescript-eslint/no-require-imports
  });
  const outcomes = await Promise.all([decideSubmission(deps(), { accountId, submissionId: s._id }), other(deps(), { accountId, submissionId: s._id })]);
  expect(outcomes.map((o) => o.outcome).sort()).toEqual(['ALREADY_DECIDED', 'DECIDED']);
  expect(await facts()).toHaveLength(1);
  expect(await mailsTo(s.email)).toHaveLength(1);
});

it("one address's submissions take turns, and a failed one does not hold up the next", async () => {
  const { accountId, form } = await account();
  const email = `turns-${crypto.randomUUID()}@example.org`;
  const [first, second] = [await submitted(accountId, form.id, email), await submitted(accountId, form.id, email)];
  const down = signupPeers({ subscriber: nowhere, messaging: messaging.address }, 2_000);
  closers.push(() => down.close());
  const [failed, decided] = await Promise.allSettled([
    decideSubmission(deps({ peers: down }), { accountId, submissionId: first._id }),
    decideSubmission(deps(), { accountId, submissionId: second._id }),
  ]);
  expect(failed.status).toBe('rejected');
  expect(decided).toEqual({ status: 'fulfilled', value: { outcome: 'DECIDED', decision: 'QUEUED' } });
  // the first, retried after the second: the same form mailed the address a moment ago
  expect(await decideSubmission(deps(), { accountId, submissionId: first._id })).toEqual({ outcome: 'DECIDED', decision: 'CONFIRMATION_MAIL_ALREADY_SENT' });
  expect(await mailsTo(email)).toHaveLength(1);
});
