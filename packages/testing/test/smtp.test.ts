// The capture relay as a real SMTP client (nodemailer) sees it: what it records and how it answers.
import nodemailer from 'nodemailer';
import { startCaptureRelay, type CaptureRelay } from '../src/smtp';

describe('capture relay', () => {
  let relay: CaptureRelay;
  beforeEach(async () => {
    relay = await startCaptureRelay();
  });
  afterEach(() => relay.close());

  const send = (to: string, extra: Record<string, unknown> = {}) =>
    nodemailer
      .createTransport({ url: relay.url, ignoreTLS: true, connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 5_000 } as never)
      .sendMail({
        from: 'Shop <shop@example.com>',
        to,
        replyTo: 'help@example.com',
        subject: 'Your order',
        html: '<p>Hello <b>Ann</b></p>',
        text: 'Hello Ann',
        envelope: { from: 'bounce-1@bounces.localhost', to },
        headers: { 'List-Unsubscribe': '<https://example.com/u/x>' },
        ...extra,
      });

  it('records the envelope, raw message, headers and bodies of an accepted message', async () => {
    const info = await send('ann@example.org', { messageId: '<m1@example.com>' });
    expect(info.response).toMatch(/^250/);
    expect(relay.messages).toHaveLength(1);
    const [m] = relay.messages;
    expect(m.mailFrom).toBe('bounce-1@bounces.localhost');
    expect(m.rcptTo).toEqual(['ann@example.org']);
    expect(m.headers.from).toBe('Shop <shop@example.com>');
    expect(m.headers['reply-to']).toBe('help@example.com');
    expect(m.headers['list-unsubscribe']).toBe('<https://example.com/u/x>');
    expect(m.messageId).toBe('<m1@example.com>');
    expect(m.subject).toBe('Your order');
    expect(m.html).toContain('<b>Ann</b>');
    expect(m.text?.trim()).toBe('Hello Ann');
    expect(m.raw).toContain('Subject: Your order');
    expect(relay.receivedFor('ANN@example.org')).toHaveLength(1);
  });

  it('answers 451 and 550 per recipient and records nothing for them', async () => {
    relay.answer('busy@example.org', 451);
    relay.answer('gone@example.org', 550);
    await expect(send('busy@example.org')).rejects.toMatchObject({ responseCode: 451 });
    await expect(send('gone@example.org')).rejects.toMatchObject({ responseCode: 550 });
    await send('ok@example.org');
    expect(relay.messages.map((m) => m.rcptTo[0])).toEqual(['ok@example.org']);
    expect(relay.attemptsFor('busy@example.org')).toBe(1);
  });

  it('uses a list of answers one per attempt, the last repeating', async () => {
    relay.answer('later@example.org', [451, 250]);
    await expect(send('later@example.org')).rejects.toMatchObject({ responseCode: 451 });
    await send('later@example.org');
    await send('later@example.org');
    expect(relay.attemptsFor('later@example.org')).toBe(3);
    expect(relay.receivedFor('later@example.org')).toHaveLength(2);
  });

  it('drops the connection without an answer', async () => {
    relay.answer('drop@example.org', 'drop');
    const err = await send('drop@example.org').then(() => null, (e: Error & { responseCode?: number }) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err?.responseCode).toBeUndefined();
    expect(relay.messages).toHaveLength(0);
  });

  it('waits for messages and can answer slowly', async () => {
    relay.setDataDelay(300);
    const started = Date.now();
    const sent = send('slow@example.org');
    await relay.waitFor((ms) => ms.length === 1, 5_000);
    await sent;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await expect(relay.waitFor((ms) => ms.length === 2, 200)).rejects.toThrow(/within 200 ms/);
  });
});
