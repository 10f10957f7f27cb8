// SendEmailMessage over gRPC with a dedupe key and a sender profile, on the real messaging process
// (with the real subscriber service it asks for recipients, and a capture relay as the SMTP relay):
// concurrent sends with one key create one message and one mail, and every caller gets its id; the
// named sender profile is the mail's From. This is how the form service sends confirmation mails.
import crypto from 'node:crypto';
import { createClient, type PromiseClient } from '@mailer/kit';
import { emailMessagesV1, emailTemplatesV1, senderProfilesV1 } from '@mailer/proto';
import { connect, type NatsConnection } from 'nats';
import { outboxOf, startCaptureRelay, startNatsServer, startService, waitForSettled, type CaptureRelay, type NatsServerHandle, type RunningService } from '@mailer/testing';

jest.setTimeout(120_000);

let nats: NatsServerHandle;
let nc: NatsConnection;
let relay: CaptureRelay;
let subscriber: RunningService;
let messaging: RunningService;
let messages: PromiseClient<emailMessagesV1.EmailMessageServiceClient>;
let profiles: PromiseClient<senderProfilesV1.SenderProfileServiceClient>;
let templates: PromiseClient<emailTemplatesV1.EmailTemplateServiceClient>;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  relay = await startCaptureRelay();
  subscriber = await startService('subscriber', { NATS_URL: nats.url });
  messaging = await startService('messaging', { NATS_URL: nats.url, SMTP_URL: relay.url, SUBSCRIBER_GRPC_ADDR: subscriber.address });
  messages = createClient(emailMessagesV1.EmailMessageServiceClient, messaging.address, 30_000);
  profiles = createClient(senderProfilesV1.SenderProfileServiceClient, messaging.address, 30_000);
  templates = createClient(emailTemplatesV1.EmailTemplateServiceClient, messaging.address, 30_000);
});
afterAll(async () => {
  messages?.close();
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
  const news = (await profiles.createSenderProfile({ accountId, profile: { name: 'News', fromEmail: 'news@example.com', fromName: 'News Desk' } })).senderProfile!;
  await templates.createEmailTemplate({ accountId, template: { name: 'hello', subject: 'Hello', html: '<p>Hello</p>' } });
  return { accountId, newsId: news.id };
}

const request = (accountId: string, email: string, extra: Partial<emailMessagesV1.SendEmailMessageRequest> = {}): emailMessagesV1.SendEmailMessageRequest => ({
  accountId, templateName: 'hello', email, substitutionDataJson: '', eventPropertiesJson: '', senderProfileId: '', dedupeKey: '', builtinTemplate: 0, ...extra,
});
/** The barrier before counting mail: every email job handled, the outboxes empty. */
const settled = () => waitForSettled(nc, { outboxes: [outboxOf(messaging), outboxOf(subscriber)] });

it('ten concurrent sends with one dedupe key: one message, one mail, the same id for every caller', async () => {
  const { accountId } = await account();
  const email = `race-${crypto.randomUUID()}@example.org`;
  const answers = await Promise.all(Array.from({ length: 10 }, () => messages.sendEmailMessage(request(accountId, email, { dedupeKey: 'form-confirmation:s-1' }))));
  const ids = new Set(answers.map((a) => a.messageId));
  expect(ids.size).toBe(1);
  const list = await messages.listEmailMessages({ accountId, pageNumber: 1, pageSize: 50, status: 0 });
  expect(list.items.map((m) => m.messageId)).toEqual([...ids]);
  await relay.waitFor(() => relay.receivedFor(email).length >= 1, 60_000);
  // Sent once: a later send with the key answers the same message, and no second mail arrives.
  expect((await messages.sendEmailMessage(request(accountId, email, { dedupeKey: 'form-confirmation:s-1' }))).messageId).toBe([...ids][0]);
  await settled();
  expect(relay.receivedFor(email)).toHaveLength(1);
  // Another key is another message.
  const other = await messages.sendEmailMessage(request(accountId, email, { dedupeKey: 'form-confirmation:s-2' }));
  expect(ids.has(other.messageId)).toBe(false);
});

it('the named sender profile is the From of the mail; empty is the account default; unknown is NOT_FOUND sender_profile_not_found', async () => {
  const { accountId, newsId } = await account();
  const named = `named-${crypto.randomUUID()}@example.org`;
  const byDefault = `default-${crypto.randomUUID()}@example.org`;
  await messages.sendEmailMessage(request(accountId, named, { senderProfileId: newsId }));
  await messages.sendEmailMessage(request(accountId, byDefault));
  await relay.waitFor(() => relay.receivedFor(named).length > 0 && relay.receivedFor(byDefault).length > 0, 60_000);
  expect(relay.receivedFor(named)[0]!.headers.from).toContain('news@example.com');
  expect(relay.receivedFor(byDefault)[0]!.headers.from).toContain('shop@example.com');
  const err = await messages.sendEmailMessage(request(accountId, named, { senderProfileId: crypto.randomUUID() })).then(() => null, (e: { code: number; metadata: { get(k: string): unknown[] } }) => e);
  expect(err?.code).toBe(5);
  expect(err?.metadata.get('x-error-id')).toEqual(['sender_profile_not_found']);
});
