// The delivery worker end to end in one process: real nats-server (JOBS, DOMAIN), a real embedded
// store, messages accepted by the accepting use case, the production consumer and use case, and a real
// SMTP relay that captures what was sent.
import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { startCaptureRelay, type CaptureRelay } from '@mailer/testing';
import { eventsOf } from '@mailer/testing/subscriber';
import { messageCollections, messagesOf, noEngagementYet, type EmailMessageDoc } from '../src/mail/store/messages';
import { startDeliveryHarness, type DeliveryHarness } from './support/delivery';

jest.setTimeout(60_000);

describe('delivery worker', () => {
  let relay: CaptureRelay;
  let h: DeliveryHarness;
  const account = () => crypto.randomUUID();
  /** messaging_email_outcomes_total once every job so far is done (an earlier test's send included). */
  const baseline = async () => {
    await h.waitForJobsDone();
    return h.emailOutcomes();
  };
  /** What messaging_email_outcomes_total counted since `before` (every outcome, 0 included). */
  const counted = async (before: Record<string, number>) => {
    await h.waitForJobsDone();
    const now = await h.emailOutcomes();
    return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (before[k] ?? 0)]));
  };
  const none = { sent: 0, delivered: 0, deferred: 0, bounced: 0, complained: 0, failed: 0 };

  beforeAll(async () => {
    relay = await startCaptureRelay();
    h = await startDeliveryHarness(relay);
  });
  afterAll(async () => {
    await h?.stop();
    await relay?.close();
  });

  it('sends the stored message with its headers and bodies, VERP return path and stable Message-ID, then marks it DELIVERED with facts', async () => {
    const accountId = account();
    // automation mail: marketing, to a subscriber in a topic (List-Unsubscribe)
    const subscriber = { id: crypto.randomUUID(), email: 'reader1@example.org', firstName: 'Ann', fields: {}, status: 'ACTIVE' };
    const id = await h.send(accountId, { email: 'reader1@example.org', kind: 'AUTOMATION', subscriber, topicId: crypto.randomUUID() });

    const done = await h.waitForMessage(accountId, id, (m) => m.status === 'DELIVERED');
    const [mail] = relay.receivedFor('reader1@example.org');
    expect(mail.headers.from).toBe('The Shop <shop@example.com>');
    expect(mail.headers['reply-to']).toBe('help@example.com');
    expect(mail.headers.to).toBe('reader1@example.org');
    expect(mail.subject).toBe('Your order 42');
    const unsubscribe = mail.headers['list-unsubscribe'] as string;
    expect(unsubscribe).toMatch(/^<[^>]+\/u\/[^>]+>$/);
    expect(h.links.verify('unsubscribe', unsubscribe.slice(1, -1).split('/u/')[1]!)).toMatchObject({ accountId, subscriberId: subscriber.id, messageId: id });
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.messageId).toBe(`<${id}@example.com>`);
    expect(mail.html).toContain('<p>Hello <b>Ann</b>, thanks for order 42.</p>');
    expect(mail.text).toContain('Hello Ann, thanks for order 42.');
    // Envelope sender: this message's own signed address on BOUNCE_DOMAIN.
    expect(mail.mailFrom.endsWith('@bounces.test.example')).toBe(true);
    expect(mail.mailFrom).toBe(h.links.returnPath(id));
    expect(h.links.messageOfReturnPath(mail.mailFrom)).toBe(id);
    expect(mail.headers['dkim-signature']).toBeUndefined();

    expect(done.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
    expect(done.sentAt).toBeInstanceOf(Date);
    expect(done.deliveredAt).toEqual(done.sentAt);
    expect(done.attempts).toEqual([expect.objectContaining({ outcome: 'SENT', smtpCode: 250, response: expect.stringMatching(/^250 /) })]);
    expect(done.sending).toBeNull();
    expect(await h.body(accountId, id)).toBeNull();

    const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 2);
    expect(facts.map((f) => f.type)).toEqual(['email.sent', 'email.delivered']);
    expect(facts[0]).toMatchObject({
      messageId: id,
      email: 'reader1@example.org',
      subscriberId: subscriber.id,
      kind: 'AUTOMATION',
      templateName: 'order-confirmation',
      eventProperties: { orderId: '42' },
      smtpCode: 250,
      occurredAt: done.sentAt!.toISOString(),
    });
  });

  it('retries a 451 after the schedule and delivers: DEFERRED then DELIVERED, two attempts', async () => {
    const accountId = account();
    const to = { email: 'busy@example.org' };
    relay.answer('busy@example.org', [451, 250]);
    const before = await baseline();
    const msg = await h.send(accountId, to);

    const deferred = await h.waitForMessage(accountId, msg, (m) => m.status === 'DEFERRED');
    expect(deferred.attempts).toEqual([expect.objectContaining({ outcome: 'DEFERRED', smtpCode: 451, response: expect.stringContaining('try again later') })]);
    expect(deferred.nextAttemptAt!.getTime()).toBeGreaterThan(deferred.attempts[0].at.getTime());
    expect(relay.receivedFor('busy@example.org')).toHaveLength(0);

    const done = await h.waitForMessage(accountId, msg, (m) => m.status === 'DELIVERED');
    expect(done.attempts.map((a) => [a.outcome, a.smtpCode])).toEqual([
      ['DEFERRED', 451],
      ['SENT', 250],
    ]);
    expect(done.history.map((s) => s.status)).toEqual(['QUEUED', 'DEFERRED', 'SENT', 'DELIVERED']);
    // The retry waited for the schedule (1 s here).
    expect(done.attempts[1].at.getTime() - done.attempts[0].at.getTime()).toBeGreaterThanOrEqual(900);
    expect(relay.receivedFor('busy@example.org')).toHaveLength(1);
    expect(relay.attemptsFor('busy@example.org')).toBe(2);
    expect(await counted(before)).toEqual({ ...none, deferred: 1, sent: 1, delivered: 1 });
  });

  it('marks a 550 BOUNCED (hard) at once after one attempt: body dropped, email.bounced, address suppressed', async () => {
    const accountId = account();
    const to = { email: 'gone@example.org' };
    relay.answer('gone@example.org', 550);
    const before = await baseline();
    const msg = await h.send(accountId, to);

    const bounced = await h.waitForMessage(accountId, msg, (m) => m.status === 'BOUNCED');
    expect(bounced.attempts).toEqual([expect.objectContaining({ outcome: 'BOUNCED', smtpCode: 550 })]);
    expect(bounced.bounce).toEqual({ type: 'HARD', diagnosticCode: expect.stringContaining('550') });
    expect(bounced.bouncedAt).toBeInstanceOf(Date);
    expect(bounced.history.map((s) => s.status)).toEqual(['QUEUED', 'BOUNCED']);
    expect(await h.body(accountId, msg)).toBeNull();
    await h.waitForJobsDone();
    expect(relay.attemptsFor('gone@example.org')).toBe(1);
    const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 1);
    expect(facts).toEqual([expect.objectContaining({ type: 'email.bounced', messageId: msg, bounceType: 'HARD' })]);
    // The hard bounce's effects (app/bounces.ts): the address is suppressed for the account.
    expect(await h.suppression(accountId, 'gone@example.org')).toMatchObject({ reason: 'HARD_BOUNCE', messageId: msg });
    expect(await counted(before)).toEqual({ ...none, bounced: 1 });
  });

  it('retries dropped connections by the schedule, then FAILED when it is used up', async () => {
    const accountId = account();
    const to = { email: 'flaky@example.org' };
    relay.answer('flaky@example.org', 'drop');
    const before = await baseline();
    const msg = await h.send(accountId, to);

    const failed = await h.waitForMessage(accountId, msg, (m) => m.status === 'FAILED');
    // Tried once plus once per schedule entry (MAIL_RETRY_SCHEDULE_SECONDS=1,1).
    expect(failed.attempts.map((a) => [a.outcome, a.smtpCode])).toEqual([
      ['DEFERRED', null],
      ['DEFERRED', null],
      ['FAILED', null],
    ]);
    expect(failed.history.map((s) => s.status)).toEqual(['QUEUED', 'DEFERRED', 'FAILED']);
    expect(await h.body(accountId, msg)).toBeNull();
    // (The pool itself may try a dropped reused connection again before reporting: never after data went out.)
    expect(relay.attemptsFor('flaky@example.org')).toBeGreaterThanOrEqual(3);
    expect(relay.receivedFor('flaky@example.org')).toHaveLength(0);
    expect(await counted(before)).toEqual({ ...none, deferred: 2, failed: 1 });
  });

  it('does not send to an address suppressed after the message was accepted: SUPPRESSED, body dropped', async () => {
    const accountId = account();
    // The first try is deferred (451); while the message waits for its retry the address is suppressed.
    relay.answer('complained@example.org', [451, 250]);
    const msg = await h.send(accountId, { email: 'complained@example.org' });
    await h.waitForMessage(accountId, msg, (m) => m.status === 'DEFERRED');
    await h.suppress(accountId, 'complained@example.org', 'COMPLAINT');
    const suppressed = await h.waitForMessage(accountId, msg, (m) => m.status === 'SUPPRESSED');
    expect(suppressed.suppressionReason).toBe('COMPLAINT');
    expect(suppressed.attempts.map((a) => a.outcome)).toEqual(['DEFERRED']);
    expect(suppressed.history.map((s) => s.status)).toEqual(['QUEUED', 'DEFERRED', 'SUPPRESSED']);
    expect(await h.body(accountId, msg)).toBeNull();
    await h.waitForJobsDone();
    expect(relay.attemptsFor('complained@example.org')).toBe(1);
    expect(relay.receivedFor('complained@example.org')).toHaveLength(0);
    // Suppressed in another account only: sent.
    await h.send(account(), { email: 'complained@example.org' });
    await relay.waitFor(() => relay.receivedFor('complained@example.org').length === 1);
  });

  it('sends nothing for a redelivered job or a duplicate published at the same time', async () => {
    const accountId = account();
    const to = { email: 'once@example.org' };
    const before = await baseline();
    const msg = await h.send(accountId, to);
    await h.publishJob(accountId, msg); // a duplicate racing the first
    await h.waitForMessage(accountId, msg, (m) => m.status === 'DELIVERED');
    await h.waitForJobsDone();

    await h.publishJob(accountId, msg); // the same job again, later
    await h.waitForJobsDone();
    expect(relay.receivedFor('once@example.org')).toHaveLength(1);
    const after = await h.get(accountId, msg);
    expect(after!.attempts).toHaveLength(1);
    expect(after!.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
    expect(await counted(before)).toEqual({ ...none, sent: 1, delivered: 1 }); // counted once too
  });

  /**
   * A queued message written straight into the store: only for the batch test, which needs its jobs
   * to arrive at once (acceptance publishes each job as soon as its message is stored, so deliveries
   * would overlap the acceptances and their commits).
   */
  const queuedMessage = (email: string): Omit<EmailMessageDoc, 'accountId'> => {
    const now = new Date();
    return {
      _id: crypto.randomUUID(), kind: 'TRANSACTIONAL', templateName: 'order-confirmation', email, subscriberId: null, topicId: null,
      senderProfileId: crypto.randomUUID(), fromEmail: 'shop@example.com', fromName: 'The Shop', replyTo: 'help@example.com', subject: 'Your order 42',
      links: [], tracking: { opens: false, clicks: false }, status: 'QUEUED', suppressionReason: null, history: [{ status: 'QUEUED', at: now }], attempts: [],
      nextAttemptAt: null, createdAt: now, sentAt: null, deliveredAt: null, bouncedAt: null, complainedAt: null, ...noEngagementYet(), eventProperties: { orderId: '42' },
    };
  };
  const body = { html: '<p>Hello <b>Ann</b>, thanks for order 42.</p>', text: 'Hello Ann, thanks for order 42.', headers: {} };

  it('works in batches: 60 jobs at once are sent once each, with fewer store commits than mails (a batch is claimed in one and settled in one)', async () => {
    const accountId = account();
    const before = await baseline();
    const repo = messagesOf(messageCollections(h.store.store), accountId);
    const msgs = Array.from({ length: 60 }, (_, i) => queuedMessage(`batch${i}@example.org`));
    for (const m of msgs) await repo.insert(m, body);
    const commits = h.store.store.stats!().commits;
    await Promise.all(msgs.map((m) => h.publishJob(accountId, m._id)));
    await h.waitForJobsDone();
    const done = await Promise.all(msgs.map((m) => repo.get(m._id)));
    expect(done.map((m) => m?.status)).toEqual(msgs.map(() => 'DELIVERED'));
    for (const m of msgs) expect(relay.receivedFor(m.email)).toHaveLength(1);
    // one message at a time took a commit to claim and one to settle each (two per mail, the outbox's aside)
    expect(h.store.store.stats!().commits - commits).toBeLessThan(msgs.length);
    expect(await counted(before)).toEqual({ ...none, sent: 60, delivered: 60 });
    const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 120);
    expect(facts.filter((f) => f.type === 'email.delivered').map((f) => f.messageId).sort()).toEqual(msgs.map((m) => m._id).sort());
  });

  it('terminates a job that does not parse, acknowledges one for an unknown message, and goes on', async () => {
    const accountId = account();
    const { publish } = await import('@mailer/nats');
    await publish(h.nc.jetstream(), `jobs.email.${accountId}`, { accountId, messageId: 42 });
    await h.publishJob(accountId, crypto.randomUUID());
    const to = { email: 'after-poison@example.org' };
    const msg = await h.send(accountId, to);
    await h.waitForMessage(accountId, msg, (m) => m.status === 'DELIVERED');
    await h.waitForJobsDone();
    const counts = Object.fromEntries((await h.outcomes.get()).values.map((v) => [v.labels.outcome, v.value]));
    expect(counts.malformed).toBe(1);
    expect(counts.unknown_message).toBe(1);
  });
});

describe('delivery worker settings', () => {
  let relay: CaptureRelay;
  afterEach(async () => {
    await relay?.close();
  });

  it('signs with DKIM when DKIM_KEYS has the sender domain, and only then', async () => {
    relay = await startCaptureRelay();
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const h = await startDeliveryHarness(relay, { DKIM_KEYS: JSON.stringify({ 'Example.com': { selector: 'mail2026', privateKey: pem } }) });
    try {
      const accountId = crypto.randomUUID();
      await h.send(accountId, { email: 'dkim@example.org' });
      await h.send(accountId, { email: 'nodkim@example.org', senderProfileId: await h.senderProfile(accountId, 'news@other.example') });
      await relay.waitFor((ms) => ms.length === 2);
      const [mail] = relay.receivedFor('dkim@example.org');
      const sig = mail.headers['dkim-signature'];
      expect(sig).toMatch(/(^|;\s*)d=example\.com;/);
      expect(sig).toMatch(/(^|;\s*)s=mail2026;/);
      expect(sig).toMatch(/(^|;\s*)h=[^;]*from/i);
      // and a receiving server that looks the key up finds the signature good
      const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
      const resolver = async (name: string, rr: string) => (rr === 'TXT' && name === 'mail2026._domainkey.example.com' ? [[txt]] : Promise.reject(Object.assign(new Error(name), { code: 'ENOTFOUND' })));
      const { results } = await dkimVerify(Buffer.from(mail.raw), { resolver } as never);
      expect(results.map((r: { signingDomain?: string; status: { result: string } }) => `${r.signingDomain}: ${r.status.result}`)).toEqual(['example.com: pass']);
      expect(relay.receivedFor('nodkim@example.org')[0].headers['dkim-signature']).toBeUndefined();
    } finally {
      await h.stop();
    }
  });

  it('with MAIL_DELIVERY_CONFIRMATION=dsn, a 250 makes the message SENT only (a success DSN confirms delivery later)', async () => {
    relay = await startCaptureRelay();
    const h = await startDeliveryHarness(relay, { MAIL_DELIVERY_CONFIRMATION: 'dsn' });
    try {
      const accountId = crypto.randomUUID();
      const to = { email: 'dsn@example.org' };
      const msg = await h.send(accountId, to);
      const sent = await h.waitForMessage(accountId, msg, (m) => m.status === 'SENT');
      expect(sent.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT']);
      expect(sent.deliveredAt).toBeNull();
      expect(await h.body(accountId, msg)).toBeNull();
      const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 1);
      await h.waitForJobsDone(); // an email.delivered would have been recorded with it and published by now
      expect((await eventsOf(h.nc, accountId, () => true)).map((f) => f.type)).toEqual(['email.sent']);
      expect(facts[0]).toMatchObject({ type: 'email.sent', smtpCode: 250 });
    } finally {
      await h.stop();
    }
  });

  it('holds an account to MAIL_ACCOUNT_RATE_PER_SECOND: over the rate is delayed, not dropped', async () => {
    relay = await startCaptureRelay();
    const h = await startDeliveryHarness(relay, { MAIL_ACCOUNT_RATE_PER_SECOND: '2' });
    try {
      const accountId = crypto.randomUUID();
      const msgs: string[] = [];
      for (let i = 0; i < 6; i++) msgs.push(await h.send(accountId, { email: `rate${i}@example.org` }));
      // Another account is not held back by the first one's rate.
      await h.send(crypto.randomUUID(), { email: 'other-account@example.org' });
      await relay.waitFor((ms) => ms.length === 7, 30_000);
      const times = relay.messages.filter((m) => m.rcptTo[0].startsWith('rate')).map((m) => m.receivedAt.getTime());
      // A burst of 2, then one every 500 ms: the sixth no sooner than ~2 s after the first.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1_800);
      for (const m of msgs) await h.waitForMessage(accountId, m, (x) => x.status === 'DELIVERED');
    } finally {
      await h.stop();
    }
  });
});
