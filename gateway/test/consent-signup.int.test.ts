// Consent signups of custom events end to end (the API contract "Events and automations": "an unknown email
// creates no subscriber unless consent is present: then an UNCONFIRMED subscriber is created with the
// consent recorded and a double opt-in mail is sent as for a form signup"), through real processes
// (support/form-stack.ts: nats-server, subscriber, form and messaging services, gateway; messaging
// sends to a capture relay): POST /events -> the messaging event consumer -> the form service's
// ConsentSignup (suppression list, Signup, the double opt-in rules, the confirmation mail) -> the
// mail's link confirms through POST /public/confirm/{token}. One event never mails twice: a retried
// POST, a redelivered stream message, and a redelivery after the signup but before the event record.
import crypto from 'node:crypto';
import type { ServiceError } from '@grpc/grpc-js';
import { createClient, fromServiceError } from '@mailer/kit';
import { consentSignupV1, submissionsV1 } from '@mailer/proto';
import { startCaptureRelay, waitFor, type CaptureRelay } from '@mailer/testing';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(240_000);

const PUBLIC_BASE_URL = 'https://mail.consent.test';
let relay: CaptureRelay;
let env: FormStack;
let a: Api;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startFormStack({
    publicBaseUrl: PUBLIC_BASE_URL,
    gatewayEnv: { GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
  });
  a = await env.account('consent-a');
  // the account's default sender: the confirmation mail of a consent signup has no form naming one
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' }), 201);
}, 240_000);

afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

type RecordedEvent = { eventId: string; email: string; subscriberId: string | null; outcome: string; runIds: string[]; consentDecision: string | null };

const unique = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@consent.test`;
const consent = { source: 'https://shop.test/checkout', givenAt: '2026-03-01T10:00:00Z' };

async function postEvent(body: Record<string, unknown>): Promise<{ eventId: string; duplicate: boolean }> {
  return expectStatus(await a.post('/events', { eventKey: 'order.paid', ...body }), 202);
}

/** Polls GET /events until the event is recorded. */
const recorded = (eventId: string, email: string): Promise<RecordedEvent> =>
  waitFor(`event ${eventId} recorded`, async () => (expectStatus(await a.get(`/events?email=${encodeURIComponent(email)}`), 200).items as RecordedEvent[]).find((e) => e.eventId === eventId), 60_000);

const subscriberByEmail = async (email: string) => a.get(`/subscribers/by-email/${encodeURIComponent(email)}`);

/** Every mail to `email`, once every event, signup and mail job was handled (the barrier). */
async function mailsSettledFor(email: string) {
  await env.settled();
  return relay.receivedFor(email);
}

/** The confirm token of the (one) mail to `email`. */
function tokenOf(html: string): string {
  const token = new RegExp(`${PUBLIC_BASE_URL}/public/confirm/([A-Za-z0-9_-]+)`).exec(html)?.[1];
  expect(token).toBeDefined();
  return token!;
}

const page = async (token: string, method: 'GET' | 'POST') => {
  const res = await fetch(`${env.gw.url}/public/confirm/${token}`, {
    method,
    redirect: 'manual',
    headers: method === 'POST' ? { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' } : { accept: 'text/html' },
    ...(method === 'POST' ? { body: '' } : {}),
  });
  return { status: res.status, text: await res.text() };
};

it('an unknown address with consent: UNCONFIRMED subscriber with the consent, one confirmation mail whose link makes it ACTIVE; the same idempotencyKey again mails nothing more', async () => {
  const email = unique('ann');
  const first = await postEvent({ email, consent, idempotencyKey: `order-${email}` });
  const again = await postEvent({ email, consent, idempotencyKey: `order-${email}` });
  expect(again).toEqual({ eventId: first.eventId, duplicate: true });

  const event = await recorded(first.eventId, email);
  expect(event).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED', subscriberId: expect.any(String), runIds: [] });
  const subscriber = expectStatus(await subscriberByEmail(email), 200);
  expect(subscriber).toMatchObject({ id: event.subscriberId, subscriberStatus: 'UNCONFIRMED', gdprAgreement: 'https://shop.test/checkout (given 2026-03-01T10:00:00.000Z)' });

  const mails = await mailsSettledFor(email);
  expect(mails).toHaveLength(1);
  const html = mails[0]!.html ?? '';
  // the built-in template: no form, so "our mailing list"
  expect(mails[0]!.subject).toBe('Please confirm your subscription to our mailing list');
  const token = tokenOf(html);

  const shown = await page(token, 'GET');
  expect(shown.status).toBe(200);
  expect(shown.text).toContain('Confirm your subscription');
  expect(expectStatus(await subscriberByEmail(email), 200).subscriberStatus).toBe('UNCONFIRMED'); // GET changes nothing
  const confirmed = await page(token, 'POST');
  expect(confirmed.status).toBe(200);
  expect(confirmed.text).toContain('Subscription confirmed');
  expect(expectStatus(await subscriberByEmail(email), 200).subscriberStatus).toBe('ACTIVE');
  expect((await page(token, 'POST')).status).toBe(200); // twice: the same page
});

it('a redelivered stream message of the event, and a redelivery after the signup but before the event record, send no second mail', async () => {
  // the same event on the stream twice (a lost ack, a replay): recorded once
  const email = unique('bob');
  const { eventId } = await postEvent({ email, consent });
  const now = new Date().toISOString();
  const message = { eventId, accountId: a.accountId, eventKey: 'order.paid', email, occurredAt: now, receivedAt: now, triggerAutomations: true, properties: {}, consent: { source: consent.source, givenAt: '2026-03-01T10:00:00.000Z' } };
  await env.stack.nc.jetstream().publish(`events.${a.accountId}`, JSON.stringify(message), { msgID: `${eventId}-again` });
  expect(await recorded(eventId, email)).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED' });

  // The crash window: the form service signed the address up and mailed (as the consumer's first try
  // did), then the event reaches the consumer again with no record. Its lookup now finds the new
  // subscriber; the form service answers this event's signup: SUBSCRIBER_CREATED, no second mail.
  const cy = unique('cy');
  const crashedEventId = crypto.randomUUID();
  const forms = createClient(consentSignupV1.ConsentSignupServiceClient, env.formGrpcAddr, 20_000);
  try {
    const call = { accountId: a.accountId, eventId: crashedEventId, email: cy, consentSource: consent.source, consentGivenAt: '2026-03-01T10:00:00.000Z', subscriberKnown: false };
    const signedUp = await forms.consentSignup(call);
    expect(signedUp).toMatchObject({ signedUp: true, decision: submissionsV1.FormDecision.FORM_DECISION_QUEUED, subscriberId: expect.any(String) });
    // called again (even claiming a known subscriber): the same answer, nothing new
    expect(await forms.consentSignup({ ...call, subscriberKnown: true })).toEqual(signedUp);
    // a known address this event did not sign up: nothing
    expect(await forms.consentSignup({ ...call, eventId: crypto.randomUUID(), subscriberKnown: true })).toMatchObject({ signedUp: false });
    // requests the consumer never sends are refused, nothing signed up
    const refused = (over: Partial<typeof call>) => forms.consentSignup({ ...call, eventId: crypto.randomUUID(), email: unique('refused'), ...over }).then(
        () => null,
        (e: ServiceError) => ({ code: e.code, errorId: fromServiceError(e)?.errorId }),
      );
    expect(await refused({ consentGivenAt: 'yesterday' })).toEqual({ code: 3, errorId: 'validation_failed' });
    expect(await refused({ consentSource: '' })).toEqual({ code: 3, errorId: 'validation_failed' });
    expect(await refused({ eventId: '' })).toEqual({ code: 3, errorId: 'validation_failed' });
    await env.stack.nc.jetstream().publish(`events.${a.accountId}`, JSON.stringify({ ...message, eventId: crashedEventId, email: cy }), { msgID: crashedEventId });
    expect(await recorded(crashedEventId, cy)).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED', subscriberId: signedUp.subscriberId });
  } finally {
    forms.close();
  }
  expect(await mailsSettledFor(email)).toHaveLength(1);
  expect(relay.receivedFor(cy)).toHaveLength(1);
});

it('without consent no subscriber is created and nothing is mailed; with consent for a suppressed address neither', async () => {
  const dan = unique('dan');
  const plain = await postEvent({ email: dan });
  expect(await recorded(plain.eventId, dan)).toMatchObject({ outcome: 'NO_SUBSCRIBER', consentDecision: null, subscriberId: null });
  expect((await subscriberByEmail(dan)).status).toBe(404);

  const eve = unique('eve');
  expectStatus(await a.post('/suppressions', { email: eve }), 201);
  const suppressed = await postEvent({ email: eve, consent });
  expect(await recorded(suppressed.eventId, eve)).toMatchObject({ outcome: 'NO_SUBSCRIBER', consentDecision: 'SUPPRESSED_SUBSCRIBER_POLICY', subscriberId: null });
  expect((await subscriberByEmail(eve)).status).toBe(404);

  expect(await mailsSettledFor(eve)).toHaveLength(0);
  expect(relay.receivedFor(dan)).toHaveLength(0);
});

it('automations: no run for the UNCONFIRMED subscriber a consent signup created; a known address with consent runs as usual and is not mailed', async () => {
  const automationId = expectStatus(
    await a.post('/automations', { name: 'welcome', trigger: { type: 'API_REQUEST', eventKey: 'signup.done' }, steps: [{ type: 'WAIT', duration: 'P1D' }], active: true }),
    201,
  ).id as string;
  const fay = unique('fay');
  const first = await postEvent({ eventKey: 'signup.done', email: fay, consent });
  expect(await recorded(first.eventId, fay)).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', runIds: [] });
  expect(expectStatus(await a.get(`/automations/${automationId}/runs`), 200).items).toEqual([]);

  // known now (UNCONFIRMED): a second event with consent signs nothing up again and mails nothing
  const second = await postEvent({ eventKey: 'signup.done', email: fay, consent });
  const again = await recorded(second.eventId, fay);
  expect(again).toMatchObject({ outcome: 'RUNS_STARTED', consentDecision: null });
  expect(again.runIds).toHaveLength(1);
  expect(await mailsSettledFor(fay)).toHaveLength(1);
});

it('an account without any sender profile: the event waits (retried) until one exists, then the subscriber gets its one mail', async () => {
  const b = await env.account('consent-no-sender');
  const gus = unique('gus');
  const { eventId } = expectStatus(await b.post('/events', { eventKey: 'order.paid', email: gus, consent }), 202);
  // the signup is under way (the subscriber exists) but the mail cannot go out: no record yet
  await waitFor('the subscriber signed up', async () => (await b.get(`/subscribers/by-email/${encodeURIComponent(gus)}`)).status === 200, 20_000);
  expect(expectStatus(await b.get(`/events?email=${encodeURIComponent(gus)}`), 200).items).toEqual([]);
  expectStatus(await b.post('/sender-profiles', { name: 'Late', fromEmail: 'late@example.com', fromName: 'Late' }), 201);
  await relay.waitFor(() => relay.receivedFor(gus).length > 0, 60_000);
  const items = await waitFor('the event recorded', async () => {
    const got = expectStatus(await b.get(`/events?email=${encodeURIComponent(gus)}`), 200).items as RecordedEvent[];
    return got.length > 0 && got;
  }, 60_000);
  expect(items).toEqual([expect.objectContaining({ eventId, outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED' })]);
  expect(await mailsSettledFor(gus)).toHaveLength(1);
});
