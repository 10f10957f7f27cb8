// The confirmation mailer of the form service (app/confirmation-mail.ts) against the real messaging
// process (with the real subscriber service, and a capture relay as the SMTP relay): the mail of the
// built-in template carries a signed, expiring confirm link for the submission, the form's name
// escaped, no List-Unsubscribe; a repeated or concurrent call for one submission sends one mail; a
// form's own template and sender profile are used, with confirmUrl among its values.
import crypto from 'node:crypto';
import { createClient, type PromiseClient } from '@mailer/kit';
import { emailTemplatesV1, senderProfilesV1 } from '@mailer/proto';
import { connect, type NatsConnection } from 'nats';
import { outboxOf, startCaptureRelay, startNatsServer, startService, waitForSettled, type CaptureRelay, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { confirmTokens } from '../src/app/confirm-token';
import { confirmationMailer, type SendConfirmationMail } from '../src/app/confirmation-mail';
import { emailSender, type EmailSender } from '../src/clients/email-messages';
import { formFixture } from './support/form-fixture';

jest.setTimeout(120_000);

const BASE = 'https://mail.forms.test';
const tokens = confirmTokens({ PUBLIC_BASE_URL: BASE, TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), TRACKING_SECRET_PREVIOUS: [] });
const NOW = new Date('2026-11-24T10:00:00Z');

let nats: NatsServerHandle;
let nc: NatsConnection;
let relay: CaptureRelay;
let subscriber: RunningService;
let messaging: RunningService;
let sender: EmailSender;
let profiles: PromiseClient<senderProfilesV1.SenderProfileServiceClient>;
let templates: PromiseClient<emailTemplatesV1.EmailTemplateServiceClient>;
let send: SendConfirmationMail;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  relay = await startCaptureRelay();
  subscriber = await startService('subscriber', { NATS_URL: nats.url });
  messaging = await startService('messaging', { NATS_URL: nats.url, SMTP_URL: relay.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, PUBLIC_BASE_URL: BASE });
  sender = emailSender(messaging.address, 30_000);
  profiles = createClient(senderProfilesV1.SenderProfileServiceClient, messaging.address, 30_000);
  templates = createClient(emailTemplatesV1.EmailTemplateServiceClient, messaging.address, 30_000);
  send = confirmationMailer({ tokens, sender, tokenDays: 7, now: () => NOW });
});
afterAll(async () => {
  sender?.close();
  profiles?.close();
  templates?.close();
  await messaging?.stop();
  await subscriber?.stop();
  await relay?.close();
  await nc?.close();
  await nats?.stop();
});

async function account() {
  const accountId = crypto.randomUUID();
  await profiles.createSenderProfile({ accountId, profile: { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' } });
  return accountId;
}
const linkIn = (text: string) => new RegExp(`${BASE}/public/confirm/([A-Za-z0-9_-]+)`).exec(text)?.[1] ?? null;
/** The barrier before counting mail: every email job handled, the outboxes empty. */
const settled = () => waitForSettled(nc, { outboxes: [outboxOf(messaging), outboxOf(subscriber)] });

it('built-in template: a signed link for the submission valid 7 days, the form name escaped, no List-Unsubscribe, no tracking', async () => {
  const accountId = await account();
  const submissionId = crypto.randomUUID();
  const email = `ann-${crypto.randomUUID()}@example.org`;
  const form = formFixture(crypto.randomUUID(), accountId, { name: '<script>alert(1)</script> & News' });
  const { messageId } = await send(form, { accountId, submissionId, email, values: { email } });
  expect(messageId).toMatch(/^[0-9a-f-]{36}$/);
  const [mail] = await relay.waitFor(() => relay.receivedFor(email).length > 0, 60_000).then(() => relay.receivedFor(email));
  expect(mail!.headers.from).toContain('shop@example.com');
  expect(mail!.headers['list-unsubscribe']).toBeUndefined();
  expect(mail!.subject).toBe('Please confirm your subscription to <script>alert(1)</script> & News');
  expect(mail!.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; News');
  expect(mail!.html).not.toContain('<script>');
  expect(mail!.html).not.toContain('/t/o/'); // no open pixel
  expect(mail!.html).toContain('valid until 1 December 2026, 10:00 UTC');
  const token = linkIn(mail!.html!);
  expect(token).not.toBeNull();
  expect(linkIn(mail!.text!)).toBe(token);
  const verified = tokens.verify(token!, NOW);
  expect(verified).toMatchObject({ ok: true, claims: { accountId, submissionId, expiresAt: NOW.getTime() + 7 * 86_400_000 } });
  expect(tokens.verify(token!, new Date(NOW.getTime() + 7 * 86_400_000))).toMatchObject({ ok: false, reason: 'expired' });
});

it('one submission, one mail: repeated and concurrent calls answer the same message', async () => {
  const accountId = await account();
  const submissionId = crypto.randomUUID();
  const email = `bob-${crypto.randomUUID()}@example.org`;
  const form = formFixture(crypto.randomUUID(), accountId);
  const answers = await Promise.all(Array.from({ length: 5 }, () => send(form, { accountId, submissionId, email, values: {} })));
  expect(new Set(answers.map((a) => a.messageId)).size).toBe(1);
  await relay.waitFor(() => relay.receivedFor(email).length > 0, 60_000);
  expect((await send(form, { accountId, submissionId, email, values: {} })).messageId).toBe(answers[0]!.messageId);
  await settled();
  expect(relay.receivedFor(email)).toHaveLength(1);
  // another submission of the same address is another mail
  await send(form, { accountId, submissionId: crypto.randomUUID(), email, values: {} });
  await relay.waitFor(() => relay.receivedFor(email).length === 2, 60_000);
});

it("the form's template and sender profile: confirmUrl, form.name and expiresOn are its values", async () => {
  const accountId = await account();
  const news = (await profiles.createSenderProfile({ accountId, profile: { name: 'News', fromEmail: 'news@example.com', fromName: 'News' } })).senderProfile!;
  await templates.createEmailTemplate({
    accountId,
    template: { name: 'my-confirm', subject: 'Confirm {{ form.name }}', html: '<p>Yes: <a href="{{ confirmUrl }}">confirm</a> until {{ expiresOn }} ({{ expiryDays }} days)</p>', tracking: { opens: false, clicks: false } },
  });
  const email = `cat-${crypto.randomUUID()}@example.org`;
  const submissionId = crypto.randomUUID();
  const form = formFixture(crypto.randomUUID(), accountId, { name: 'Weekly', confirmationTemplateName: 'my-confirm', senderProfileId: news.id });
  await send(form, { accountId, submissionId, email, values: {} });
  await relay.waitFor(() => relay.receivedFor(email).length > 0, 60_000);
  const mail = relay.receivedFor(email)[0]!;
  expect(mail.headers.from).toContain('news@example.com');
  expect(mail.subject).toBe('Confirm Weekly');
  expect(mail.html).toContain('until 1 December 2026, 10:00 UTC (7 days)');
  expect(tokens.verify(linkIn(mail.html!)!, NOW)).toMatchObject({ ok: true, claims: { accountId, submissionId } });
});
