// The inbound bounce listener end to end: real DSN (RFC 3464) and ARF (RFC 5965) reports, built from
// the RFCs' examples (test/fixtures), sent over SMTP to the running messaging process; the effects
// observed through the real gateway (subscriber status and topics from the real subscriber service),
// the DOMAIN stream (email.* facts) and the stored message records. The messages the reports are about
// were sent for real: accepted through POST /email-messages (an automation's for the complaint about
// topic mail) and handed to a capture relay by the delivery worker, with the return path it signed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { openStore } from '@mailer/store';
import { adminRequest, createAccount, freePort, startCaptureRelay, startGateway, startMesh, startNatsServer, waitFor, waitForSettled, type CaptureRelay, type GatewayHandle, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { publicLinks } from '../src/readers/app/public-links';
import { messageCollections, messagesOf } from '../src/mail/store/messages';
import { sendMail } from './support/smtp-client';

jest.setTimeout(180_000);

const SECRET = crypto.randomBytes(32).toString('base64url');
const BOUNCE_DOMAIN = 'bounces.test.example';
const links = publicLinks({ PUBLIC_BASE_URL: 'http://127.0.0.1:1', BOUNCE_DOMAIN, TRACKING_SECRET: SECRET, TRACKING_SECRET_PREVIOUS: [] });
const fixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const FIXTURE_RETURN_PATH = 'b-665f1c2ab3e4d5f6a7b8c9d0-0123456789abcdef0123@bounces.localhost';

/** An RFC example report as a relay would send it about one of our messages: its return path and recipient. */
function report(name: string, messageId: string, recipient: string, originalRecipient = /rfc822; ?[^\s@]+@[^\s]+/gi): string {
  return fixture(name).split(FIXTURE_RETURN_PATH).join(links.returnPath(messageId)).replace(originalRecipient, `rfc822;${recipient}`);
}

interface Api {
  accountId: string;
  call(method: string, p: string, body?: unknown): Promise<{ status: number; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('inbound bounce listener (messaging process, SMTP)', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let relay: CaptureRelay;
  let mesh: ServiceMesh;
  let gw: GatewayHandle;
  let bouncePort: number;
  let a: Api;
  let b: Api;
  let topicId: string;
  const subscribers: Record<string, string> = {};
  const ids: Record<string, string> = {};

  async function account(name: string): Promise<Api> {
    const { accountId, apiKey } = await createAccount(gw, name);
    await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
    return {
      accountId,
      async call(method, p, body) {
        const res = await fetch(`${gw.url}${p}`, {
          method,
          headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, json: text ? JSON.parse(text) : undefined };
      },
    };
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url, ...nats.auth });
    relay = await startCaptureRelay();
    bouncePort = await freePort();
    mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber', 'messaging'], {
      messaging: {
        SMTP_URL: relay.url,
        BOUNCE_DOMAIN,
        BOUNCE_SMTP_HOST: '127.0.0.1',
        BOUNCE_SMTP_PORT: String(bouncePort),
        TRACKING_SECRET: SECRET,
        MAIL_DELIVERY_CONFIRMATION: 'dsn',
      },
    });
    gw = await startGateway({ NATS_URL: nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
    a = await account('A');
    b = await account('B');
    const topic = await a.call('POST', '/topics', { label: 'Deals' });
    expect(topic.status).toBe(201);
    topicId = topic.json.id;
    for (const name of ['ann', 'bob', 'cara', 'dan', 'eve']) {
      const res = await a.call('POST', '/subscribers', { email: `${name}@example.org`, topicIds: [topicId] });
      expect(res.status).toBe(201);
      subscribers[name] = res.json.id;
    }

    // The sent messages: accepted through the API, handed to the relay (SENT; with delivery confirmed by
    // DSN they stay SENT until a report says more).
    for (const api of [a, b]) {
      expect((await api.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' })).status).toBe(201);
      expect((await api.call('POST', '/email-templates', { name: 'receipt', subject: 'Your receipt', html: '<p>Thanks</p>' })).status).toBe(201);
    }
    const send = async (key: string, api: Api, email: string) => {
      const res = await api.call('POST', '/email-messages', { name: 'receipt', email });
      expect(res.status).toBe(202);
      ids[key] = res.json.messageId;
    };
    await send('annHard', a, 'ann@example.org');
    for (const n of [1, 2, 3]) await send(`bobSoft${n}`, a, 'bob@example.org');
    await send('danDelivered', a, 'dan@example.org');
    await send('danDelayed', a, 'dan@example.org');
    await send('eveOutage', a, 'eve@example.org');
    await send('otherAccount', b, 'ann@example.org');
    // Topic mail: an automation's (a complaint about it opts the reader out of the topic).
    expect((await a.call('POST', '/email-templates', { name: 'weekly', subject: 'This week', html: '<p>News</p>' })).status).toBe(201);
    const automation = { name: 'weekly', trigger: { type: 'API_REQUEST', eventKey: 'weekly.due' }, steps: [{ type: 'SEND_EMAIL', templateName: 'weekly', topicId }], active: true };
    expect((await a.call('POST', '/automations', automation)).status).toBe(201);
    expect((await a.call('POST', '/events', { eventKey: 'weekly.due', email: 'cara@example.org' })).status).toBe(202);
    ids.caraComplaint = await waitFor('the automation mail to cara', async () => (await a.call('GET', '/email-messages?email=cara@example.org')).json.items[0]?.messageId, 30_000);
    for (const [key, id] of Object.entries(ids)) {
      const api = key === 'otherAccount' ? b : a;
      await waitFor(`message ${key} SENT`, async () => (await api.call('GET', `/email-messages/${id}`)).json.status === 'SENT', 30_000);
    }
    // The relay saw each with the return path this test signs reports to.
    expect(relay.messages.map((m) => m.mailFrom).sort()).toEqual(Object.values(ids).map((id) => links.returnPath(id)).sort());
  });

  afterAll(async () => {
    await nc?.close();
    await gw?.stop();
    await mesh?.stop();
    await relay?.close();
    await nats?.stop();
  });

  /** The barrier before asserting that nothing (more) happened: every report's jobs and facts handled. */
  const settled = () => waitForSettled(nc, { outboxes: mesh.outboxes() });

  /** Every email.* fact on DOMAIN so far. */
  async function emailFacts(): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const consumer = await nc.jetstream().consumers.get('DOMAIN', { filterSubjects: 'domain.email.>' });
    const out = [];
    for (;;) {
      const m = await consumer.next({ expires: 1_000 });
      if (!m) break;
      out.push(m.json());
      if (m.info.pending === 0) break;
    }
    await consumer.delete().catch(() => undefined);
    return out;
  }
  /** The email.* facts about the message that reports caused (its email.sent came before any report). */
  const factsOf = async (messageId: string) => (await emailFacts()).filter((f) => f.messageId === messageId && f.type !== 'email.sent');

  const eventually = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> =>
    waitFor(what, async () => {
      const value = await read();
      return ok(value) && { value };
    }, timeoutMs).then(({ value }) => value);
  const statusOf = (name: string) => a.call('GET', `/subscribers/${subscribers[name]}`).then((r) => r.json.subscriberStatus as string);

  it('refuses, at RCPT TO, every address it did not issue: unknown, forged MAC, other domain, unknown message', async () => {
    const real = links.returnPath(ids.annHard);
    const forged = real.replace(/-([0-9a-f]{20})@/, (_, mac: string) => `-${mac.slice(0, 19)}${mac[19] === '0' ? '1' : '0'}@`);
    const t = await sendMail(bouncePort, [
      'abuse@' + BOUNCE_DOMAIN, // (postmaster is accepted and dropped: bounce-listener-limits.int.test.ts)
      forged,
      real.replace(BOUNCE_DOMAIN, 'elsewhere.example'),
      links.returnPath(crypto.randomUUID()), // signed, but no such message
      'someone@example.org', // no open relay
    ], report('postfix-hard.eml', ids.annHard, 'ann@example.org'));
    expect(t.rcptTo).toEqual([550, 550, 550, 550, 550]);
    expect(t.data).toBeUndefined();
    expect(await statusOf('ann')).toBe('ACTIVE');
  });

  it('hard bounce (RFC 3464 example, 5.x.x): message BOUNCED, email.bounced, subscriber BOUNCED through the subscriber service', async () => {
    const t = await sendMail(bouncePort, [links.returnPath(ids.annHard)], report('rfc3464-multi.eml', ids.annHard, 'ann@example.org'));
    expect(t).toMatchObject({ rcptTo: [250], data: 354, end: 250 });
    await eventually(() => statusOf('ann'), (s) => s === 'BOUNCED', 'ann status');
    const facts = await factsOf(ids.annHard);
    expect(facts).toEqual([expect.objectContaining({ type: 'email.bounced', bounceType: 'HARD', email: 'ann@example.org', subscriberId: subscribers.ann, accountId: a.accountId })]);
    expect(facts[0].diagnosticCode).toMatch(/550/);
  });

  it('the same report again is accepted and changes nothing', async () => {
    const t = await sendMail(bouncePort, [links.returnPath(ids.annHard)], report('rfc3464-multi.eml', ids.annHard, 'ann@example.org'));
    expect(t.end).toBe(250);
    await settled();
    expect((await factsOf(ids.annHard)).length).toBe(1);
  });

  it('soft bounces (RFC 3464 example, failed 4.x.x): the third of one address within 7 days suppresses it; the subscriber status stays', async () => {
    for (const n of [1, 2, 3]) {
      const id = ids[`bobSoft${n}`];
      const t = await sendMail(bouncePort, [links.returnPath(id)], report('rfc3464-simple.eml', id, 'bob@example.org'));
      expect(t.end).toBe(250);
      const facts = await eventually(() => factsOf(id), (f) => f.length === 1, `soft bounce ${n}`);
      expect(facts[0]).toMatchObject({ type: 'email.bounced', bounceType: 'SOFT' });
      // Suppressed at the third, not before.
      expect((await suppressionOf(a, 'bob@example.org'))?.reason).toBe(n === 3 ? 'SOFT_BOUNCES' : undefined);
    }
    expect(await statusOf('bob')).toBe('ACTIVE');
  });

  it('complaint (RFC 5965 example): email.complained with the topic, subscriber COMPLAINED and opted out of the topic', async () => {
    const id = ids.caraComplaint;
    const t = await sendMail(bouncePort, [links.returnPath(id)], report('arf-rfc5965.eml', id, 'cara@example.org'));
    expect(t.end).toBe(250);
    await eventually(() => statusOf('cara'), (s) => s === 'COMPLAINED', 'cara status');
    const topics = await a.call('GET', `/subscribers/${subscribers.cara}/topics`);
    expect(topics.json.topics.find((x: { topicId: string }) => x.topicId === topicId)).toMatchObject({ subscribed: false, optedOut: true });
    expect(await factsOf(id)).toEqual([expect.objectContaining({ type: 'email.complained', topicId, kind: 'AUTOMATION', templateName: 'weekly' })]);
  });

  it('an ARF report of feedback type not-spam (RFC 6650) is no complaint', async () => {
    const id = ids.danDelayed;
    const notSpam = report('arf-rfc5965.eml', id, 'dan@example.org').replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
    expect((await sendMail(bouncePort, [links.returnPath(id)], notSpam)).end).toBe(250);
    await settled();
    expect(await factsOf(id)).toEqual([]);
    expect(await statusOf('dan')).toBe('ACTIVE');
  });

  it('success DSN with MAIL_DELIVERY_CONFIRMATION=dsn: DELIVERED (email.delivered); a delayed DSN changes nothing', async () => {
    expect((await sendMail(bouncePort, [links.returnPath(ids.danDelivered)], report('delivered.eml', ids.danDelivered, 'dan@example.org'))).end).toBe(250);
    expect((await sendMail(bouncePort, [links.returnPath(ids.danDelayed)], report('rfc3464-delayed.eml', ids.danDelayed, 'dan@example.org'))).end).toBe(250);
    await eventually(() => factsOf(ids.danDelivered), (f) => f.length === 1 && f[0].type === 'email.delivered', 'delivered fact');
    expect(await factsOf(ids.danDelayed)).toEqual([]);
    expect(await statusOf('dan')).toBe('ACTIVE');
  });

  it('a report larger than the limit is refused after DATA (552), with no effect', async () => {
    const id = ids.danDelayed;
    const huge = report('rfc3464-multi.eml', id, 'dan@example.org').replace('[original message goes here]', 'x'.repeat(76).concat('\n').repeat(14_000));
    const t = await sendMail(bouncePort, [links.returnPath(id)], huge);
    expect(t.rcptTo).toEqual([250]);
    expect(t.end).toBe(552);
    await settled();
    expect(await factsOf(id)).toEqual([]);
  });

  it('the subscriber service down: the bounce is recorded and the status change arrives once it is back', async () => {
    await mesh.get('subscriber').stop();
    const messaging = mesh.get('messaging');
    const logFrom = messaging.output().length;
    const id = ids.eveOutage;
    const t = await sendMail(bouncePort, [links.returnPath(id)], report('postfix-hard.eml', id, 'eve@example.org', /nobody@example\.org/g));
    expect(t.end).toBe(250);
    await eventually(() => factsOf(id), (f) => f.length === 1, 'eve bounce fact');
    // The job's first attempt fails while the subscriber service is away.
    await eventually(async () => messaging.output().slice(logFrom), (o) => /"msg":"handler failed".*messaging-subscriber-status|messaging-subscriber-status.*"msg":"handler failed"/.test(o), 'a failed attempt', 20_000);
    expect(await statusOf('eve')).not.toBe('BOUNCED'); // (the gateway answers 503 meanwhile)
    await mesh.restart('subscriber');
    await eventually(() => statusOf('eve'), (s) => s === 'BOUNCED', 'eve status', 60_000);
  });

  const suppressionOf = async (api: Api, email: string) => (await api.call('GET', `/suppressions?email=${encodeURIComponent(email)}`)).json.items[0];

  it('GET /suppressions lists what the reports added: HARD_BOUNCE, SOFT_BOUNCES (third soft bounce), COMPLAINT, with the message; reason filter', async () => {
    expect(await suppressionOf(a, 'ann@example.org')).toEqual({ email: 'ann@example.org', reason: 'HARD_BOUNCE', createdAt: expect.stringMatching(/Z$/), messageId: ids.annHard });
    expect(await suppressionOf(a, 'BOB@example.org')).toMatchObject({ reason: 'SOFT_BOUNCES', messageId: ids.bobSoft3 });
    expect(await suppressionOf(a, 'cara@example.org')).toMatchObject({ reason: 'COMPLAINT', messageId: ids.caraComplaint });
    expect(await suppressionOf(a, 'dan@example.org')).toBeUndefined();
    const complaints = await a.call('GET', '/suppressions?reason=COMPLAINT');
    expect(complaints.json).toEqual({ items: [expect.objectContaining({ email: 'cara@example.org' })], pageNumber: 1, pageSize: 50, totalItems: 1, totalPages: 1 });
    const page = await a.call('GET', '/suppressions?pageSize=2&pageNumber=2');
    expect(page.json).toMatchObject({ pageNumber: 2, pageSize: 2, totalItems: 4, totalPages: 2 });
    expect(page.json.items).toHaveLength(2);
  });

  it('POST /suppressions: 201 MANUAL (canonical address, no message); again 200 unchanged; an address suppressed by a bounce keeps its reason', async () => {
    const first = await a.call('POST', '/suppressions', { email: ' Zed@Example.ORG ' });
    expect(first).toEqual({ status: 201, json: { email: 'zed@example.org', reason: 'MANUAL', createdAt: expect.stringMatching(/Z$/), messageId: null } });
    expect(await a.call('POST', '/suppressions', { email: 'zed@example.org' })).toEqual({ status: 200, json: first.json });
    expect(await a.call('POST', '/suppressions', { email: 'ann@example.org' })).toMatchObject({ status: 200, json: { reason: 'HARD_BOUNCE', messageId: ids.annHard } });
  });

  it('DELETE /suppressions/{email}: 204, gone from the list, subscriber status unchanged; again 404 suppression_not_found', async () => {
    expect((await a.call('DELETE', `/suppressions/${encodeURIComponent('Ann@Example.org')}`)).status).toBe(204);
    expect(await suppressionOf(a, 'ann@example.org')).toBeUndefined();
    expect(await statusOf('ann')).toBe('BOUNCED');
    expect(await a.call('DELETE', '/suppressions/ann%40example.org')).toMatchObject({ status: 404, json: { errorId: 'suppression_not_found' } });
  });

  it('tenant isolation: another account sees none of these entries and cannot remove them; its own entry for the same address is its own', async () => {
    expect((await b.call('GET', '/suppressions')).json).toMatchObject({ items: [], totalItems: 0 });
    expect(await b.call('DELETE', '/suppressions/cara%40example.org')).toMatchObject({ status: 404, json: { errorId: 'suppression_not_found' } });
    expect(await b.call('POST', '/suppressions', { email: 'cara@example.org' })).toMatchObject({ status: 201, json: { reason: 'MANUAL' } });
    expect(await suppressionOf(a, 'cara@example.org')).toMatchObject({ reason: 'COMPLAINT' });
    expect((await b.call('GET', '/suppressions')).json.totalItems).toBe(1);
  });

  it('bad input: precise 4xx, never a 5xx', async () => {
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/suppressions', { email: 'not-an-email' }, 400, 'invalid_email'],
      ['POST', '/suppressions', { email: '' }, 400, 'invalid_email'],
      ['POST', '/suppressions', {}, 400, 'validation_failed'],
      ['POST', '/suppressions', { email: 'x@example.org', reason: 'MANUAL' }, 400, 'unknown_property'],
      ['GET', '/suppressions?reason=BLOCKED', undefined, 400, 'validation_failed'],
      ['GET', '/suppressions?pageSize=1001', undefined, 400, 'validation_failed'],
      ['GET', '/suppressions?pageNumber=0', undefined, 400, 'validation_failed'],
      ['GET', '/suppressions?email=nobody', undefined, 400, 'invalid_email'],
      ['DELETE', '/suppressions/not-an-email', undefined, 400, 'invalid_email'],
    ];
    for (const [method, p, body, status, errorId] of cases) {
      const res = await a.call(method, p, body);
      expect({ method, p, status: res.status, errorId: res.json?.errorId }).toEqual({ method, p, status, errorId });
    }
  });

  it('bounce_reports_total counts reports and refusals by kind and outcome', async () => {
    const text = await (await fetch(`http://127.0.0.1:${mesh.get('messaging').ready.metricsPort}/metrics`)).text();
    const count = (kind: string, outcome: string) => Number(new RegExp(`^bounce_reports_total\\{kind="${kind}",outcome="${outcome}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect({
      refused: count('refused_recipient', 'refused'),
      unknownMessage: count('refused_recipient', 'message_not_found'),
      bounces: count('bounce', 'recorded'),
      duplicates: count('bounce', 'duplicate'),
      complaints: count('complaint', 'recorded'),
      notSpam: count('complaint', 'ignored'),
      delayed: count('delayed', 'ignored'),
      tooLarge: count('too_large', 'refused'),
    }).toEqual({ refused: 4, unknownMessage: 1, bounces: 5, duplicates: 1, complaints: 1, notSpam: 1, delayed: 1, tooLarge: 1 });
    // The mail health counter: each recorded transition once (not the duplicate report), every outcome
    // exported (the ones nothing here causes at 0).
    const outcome = (o: string) => Number(new RegExp(`^messaging_email_outcomes_total\\{outcome="${o}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1]);
    expect(Object.fromEntries(['sent', 'delivered', 'deferred', 'bounced', 'complained', 'failed'].map((o) => [o, outcome(o)]))).toEqual({
      sent: 9, // the messages the reports are about
      delivered: 1,
      deferred: 0,
      bounced: 5,
      complained: 1,
      failed: 0,
    });
  });

  it('the stored records: BOUNCED with the bounce, complaint time, DELIVERED; other accounts and other messages untouched (and /suppressions 503 once messaging is down)', async () => {
    const { dataDir } = mesh.get('messaging');
    await mesh.get('messaging').stop();
    // With the messaging service gone, the suppression API says so (503), never a 500 or a hang.
    expect(await a.call('GET', '/suppressions')).toMatchObject({ status: 503, json: { errorId: 'service_unavailable' } });
    const store = await openStore({ dataDir: path.join(dataDir, 'messaging') });
    try {
      const repo = messagesOf(messageCollections(store), a.accountId);
      const ann = (await repo.get(ids.annHard))!;
      expect(ann.status).toBe('BOUNCED');
      expect(ann.bounce).toMatchObject({ type: 'HARD' });
      expect(ann.bouncedAt).toBeInstanceOf(Date);
      expect((await repo.get(ids.bobSoft3))!.bounce).toMatchObject({ type: 'SOFT' });
      expect(await repo.get(ids.caraComplaint)).toMatchObject({ status: 'SENT', complainedAt: expect.any(Date) });
      expect(await repo.get(ids.danDelivered)).toMatchObject({ status: 'DELIVERED', deliveredAt: expect.any(Date) });
      expect((await repo.get(ids.danDelayed))!.status).toBe('SENT');
      expect((await messagesOf(messageCollections(store), b.accountId).get(ids.otherAccount))!.status).toBe('SENT');
    } finally {
      await store.close();
    }
  });
});
