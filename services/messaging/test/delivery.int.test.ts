// The delivery worker end to end in one process: real nats-server (JOBS, DOMAIN), a real embedded
// store, the production consumer and use case, and a real SMTP relay that captures what was sent.
import crypto from 'node:crypto';
import { startCaptureRelay, type CaptureRelay } from '@mailer/testing';
import { eventsOf } from '@mailer/testing/subscriber';
import { messageCollections, messagesOf } from '../src/store/messages';
import { bodyOf, queuedMessage, startDeliveryHarness, type DeliveryHarness } from './support/delivery';

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
    const msg = queuedMessage({ email: 'reader1@example.org', subscriberId: crypto.randomUUID(), kind: 'AUTOMATION' });
    const headers = { 'List-Unsubscribe': '<https://mail.example.com/u/tok>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    await h.enqueue(accountId, msg, bodyOf({ headers }));

    const done = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'DELIVERED');
    const [mail] = relay.receivedFor('reader1@example.org');
    expect(mail.headers.from).toBe('The Shop <shop@example.com>');
    expect(mail.headers['reply-to']).toBe('help@example.com');
    expect(mail.headers.to).toBe('reader1@example.org');
    expect(mail.subject).toBe('Your order 42');
    expect(mail.headers['list-unsubscribe']).toBe('<https://mail.example.com/u/tok>');
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.messageId).toBe(`<${msg._id}@example.com>`);
    expect(mail.html).toBe('<p>Hello <b>Ann</b>, thanks for order 42.</p>');
    expect(mail.text?.trim()).toBe('Hello Ann, thanks for order 42.');
    // Envelope sender: this message's own signed address on BOUNCE_DOMAIN.
    expect(mail.mailFrom.endsWith('@bounces.test.example')).toBe(true);
    expect(mail.mailFrom).toBe(h.links.returnPath(msg._id));
    expect(h.links.messageOfReturnPath(mail.mailFrom)).toBe(msg._id);
    expect(mail.headers['dkim-signature']).toBeUndefined();

    expect(done.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
    expect(done.sentAt).toBeInstanceOf(Date);
    expect(done.deliveredAt).toEqual(done.sentAt);
    expect(done.attempts).toEqual([expect.objectContaining({ outcome: 'SENT', smtpCode: 250, response: expect.stringMatching(/^250 /) })]);
    expect(done.sending).toBeNull();
    expect(await h.body(accountId, msg._id)).toBeNull();

    const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 2);
    expect(facts.map((f) => f.type)).toEqual(['email.sent', 'email.delivered']);
    expect(facts[0]).toMatchObject({
      messageId: msg._id,
      email: 'reader1@example.org',
      subscriberId: msg.subscriberId,
      kind: 'AUTOMATION',
      templateName: 'order-confirmation',
      eventProperties: { orderId: '42' },
      smtpCode: 250,
      occurredAt: done.sentAt!.toISOString(),
    });
  });

  it('retries a 451 after the schedule and delivers: DEFERRED then DELIVERED, two attempts', async () => {
    const accountId = account();
    const msg = queuedMessage({ email: 'busy@example.org' });
    relay.answer('busy@example.org', [451, 250]);
    const before = await baseline();
    await h.enqueue(accountId, msg);

    const deferred = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'DEFERRED');
    expect(deferred.attempts).toEqual([expect.objectContaining({ outcome: 'DEFERRED', smtpCode: 451, response: expect.stringContaining('try again later') })]);
    expect(deferred.nextAttemptAt!.getTime()).toBeGreaterThan(deferred.attempts[0].at.getTime());
    expect(relay.receivedFor('busy@example.org')).toHaveLength(0);

    const done = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'DELIVERED');
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
    const msg = queuedMessage({ email: 'gone@example.org' });
    relay.answer('gone@example.org', 550);
    const before = await baseline();
    await h.enqueue(accountId, msg);

    const bounced = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'BOUNCED');
    expect(bounced.attempts).toEqual([expect.objectContaining({ outcome: 'BOUNCED', smtpCode: 550 })]);
    expect(bounced.bounce).toEqual({ type: 'HARD', diagnosticCode: expect.stringContaining('550') });
    expect(bounced.bouncedAt).toBeInstanceOf(Date);
    expect(bounced.history.map((s) => s.status)).toEqual(['QUEUED', 'BOUNCED']);
    expect(await h.body(accountId, msg._id)).toBeNull();
    await h.waitForJobsDone();
    expect(relay.attemptsFor('gone@example.org')).toBe(1);
    const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 1);
    expect(facts).toEqual([expect.objectContaining({ type: 'email.bounced', messageId: msg._id, bounceType: 'HARD' })]);
    // The hard bounce's effects (app/bounces.ts): the address is suppressed for the account.
    expect(await h.suppression(accountId, 'gone@example.org')).toMatchObject({ reason: 'HARD_BOUNCE', messageId: msg._id });
    expect(await counted(before)).toEqual({ ...none, bounced: 1 });
  });

  it('retries dropped connections by the schedule, then FAILED when it is used up', async () => {
    const accountId = account();
    const msg = queuedMessage({ email: 'flaky@example.org' });
    relay.answer('flaky@example.org', 'drop');
    const before = await baseline();
    await h.enqueue(accountId, msg);

    const failed = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'FAILED');
    // Tried once plus once per schedule entry (MAIL_RETRY_SCHEDULE_SECONDS=1,1).
    expect(failed.attempts.map((a) => [a.outcome, a.smtpCode])).toEqual([
      ['DEFERRED', null],
      ['DEFERRED', null],
      ['FAILED', null],
    ]);
    expect(failed.history.map((s) => s.status)).toEqual(['QUEUED', 'DEFERRED', 'FAILED']);
    expect(await h.body(accountId, msg._id)).toBeNull();
    // (The pool itself may try a dropped reused connection again before reporting: never after data went out.)
    expect(relay.attemptsFor('flaky@example.org')).toBeGreaterThanOrEqual(3);
    expect(relay.receivedFor('flaky@example.org')).toHaveLength(0);
    expect(await counted(before)).toEqual({ ...none, deferred: 2, failed: 1 });
  });

  it('does not send to an address suppressed after the message was accepted: SUPPRESSED, body dropped', async () => {
    const accountId = account();
    const msg = queuedMessage({ email: 'complained@example.org' });
    await h.suppress(accountId, 'complained@example.org', 'COMPLAINT');
    await h.enqueue(accountId, msg);
    const suppressed = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'SUPPRESSED');
    expect(suppressed.suppressionReason).toBe('COMPLAINT');
    expect(suppressed.attempts).toEqual([]);
    expect(suppressed.history.map((s) => s.status)).toEqual(['QUEUED', 'SUPPRESSED']);
    expect(await h.body(accountId, msg._id)).toBeNull();
    await h.waitForJobsDone();
    expect(relay.attemptsFor('complained@example.org')).toBe(0);
    // Suppressed in another account only: sent.
    const other = queuedMessage({ email: 'complained@example.org' });
    await h.enqueue(account(), other);
    await relay.waitFor(() => relay.receivedFor('complained@example.org').length === 1);
  });

  it('sends nothing for a redelivered job or a duplicate published at the same time', async () => {
    const accountId = account();
    const msg = queuedMessage({ email: 'once@example.org' });
    const before = await baseline();
    await h.enqueue(accountId, msg);
    await h.publishJob(accountId, msg._id); // a duplicate racing the first
    await h.waitForMessage(accountId, msg._id, (m) => m.status === 'DELIVERED');
    await h.waitForJobsDone();

    await h.publishJob(accountId, msg._id); // the same job again, later
    await h.waitForJobsDone();
    expect(relay.receivedFor('once@example.org')).toHaveLength(1);
    const after = await h.get(accountId, msg._id);
    expect(after!.attempts).toHaveLength(1);
    expect(after!.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
    expect(await counted(before)).toEqual({ ...none, sent: 1, delivered: 1 }); // counted once too
  });

  it('works in batches: 60 jobs at once are sent once each, with fewer store commits than mails (a batch is claimed in one and settled in one)', async () => {
    const accountId = account();
    const before = await baseline();
    const repo = messagesOf(messageCollections(h.store.store), accountId);
    const msgs = Array.from({ length: 60 }, (_, i) => queuedMessage({ email: `batch${i}@example.org` }));
    for (const m of msgs) await repo.insert(m, bodyOf());
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
    const msg = queuedMessage({ email: 'after-poison@example.org' });
    await h.enqueue(accountId, msg);
    await h.waitForMessage(accountId, msg._id, (m) => m.status === 'DELIVERED');
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
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const h = await startDeliveryHarness(relay, { DKIM_KEYS: JSON.stringify({ 'Example.com': { selector: 'mail2026', privateKey: pem } }) });
    try {
      const accountId = crypto.randomUUID();
      const signed = queuedMessage({ email: 'dkim@example.org' });
      const unsigned = queuedMessage({ email: 'nodkim@example.org', fromEmail: 'news@other.example' });
      await h.enqueue(accountId, signed);
      await h.enqueue(accountId, unsigned);
      await relay.waitFor((ms) => ms.length === 2);
      const [mail] = relay.receivedFor('dkim@example.org');
      const sig = mail.headers['dkim-signature'];
      expect(sig).toMatch(/(^|;\s*)d=example\.com;/);
      expect(sig).toMatch(/(^|;\s*)s=mail2026;/);
      expect(sig).toMatch(/(^|;\s*)h=[^;]*from/i);
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
      const msg = queuedMessage({ email: 'dsn@example.org' });
      await h.enqueue(accountId, msg);
      const sent = await h.waitForMessage(accountId, msg._id, (m) => m.status === 'SENT');
      expect(sent.history.map((s) => s.status)).toEqual(['QUEUED', 'SENT']);
      expect(sent.deliveredAt).toBeNull();
      expect(await h.body(accountId, msg._id)).toBeNull();
      const facts = await eventsOf(h.nc, accountId, (es) => es.length >= 1);
      await new Promise((r) => setTimeout(r, 300)); // an email.delivered would have been published with it
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
      const msgs = Array.from({ length: 6 }, (_, i) => queuedMessage({ email: `rate${i}@example.org` }));
      for (const m of msgs) await h.enqueue(accountId, m);
      // Another account is not held back by the first one's rate.
      const other = queuedMessage({ email: 'other-account@example.org' });
      await h.enqueue(crypto.randomUUID(), other);
      await relay.waitFor((ms) => ms.length === 7, 30_000);
      const times = relay.messages.filter((m) => m.rcptTo[0].startsWith('rate')).map((m) => m.receivedAt.getTime());
      // A burst of 2, then one every 500 ms: the sixth no sooner than ~2 s after the first.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1_800);
      for (const m of msgs) await h.waitForMessage(accountId, m._id, (x) => x.status === 'DELIVERED');
    } finally {
      await h.stop();
    }
  });
});
