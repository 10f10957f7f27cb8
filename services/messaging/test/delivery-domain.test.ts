import { failureOutcome, mayTakeOver, retryDelayMs, sentOutcome, smtpCodeOf, STALE_CLAIM_MS } from '../src/mail/domain/delivery';
import { AccountSendRate } from '../src/mail/domain/send-rate';

describe('SMTP outcomes', () => {
  it('reads the reply code', () => {
    expect(smtpCodeOf('250 2.0.0 Ok: queued as 123')).toBe(250);
    expect(smtpCodeOf('250-first line')).toBe(250);
    expect(smtpCodeOf('connect ECONNREFUSED')).toBeNull();
    expect(sentOutcome('250 Ok')).toEqual({ kind: 'SENT', smtpCode: 250, response: '250 Ok' });
  });

  it('bounces only on a permanent refusal of the recipient or the message', () => {
    expect(failureOutcome({ responseCode: 550, response: '550 5.1.1 No such user', command: 'RCPT TO' })).toMatchObject({ kind: 'BOUNCED', smtpCode: 550 });
    expect(failureOutcome({ responseCode: 554, response: '554 rejected as spam', command: 'DATA' })).toMatchObject({ kind: 'BOUNCED', smtpCode: 554 });
    expect(failureOutcome({ responseCode: 451, response: '451 later', command: 'RCPT TO' })).toMatchObject({ kind: 'DEFERRED', smtpCode: 451 });
    // Our relay refusing us (authentication, sender) is not the recipient's bounce: retried.
    expect(failureOutcome({ responseCode: 535, response: '535 auth failed', command: 'AUTH PLAIN' })).toMatchObject({ kind: 'DEFERRED', smtpCode: 535 });
    expect(failureOutcome({ message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ESOCKET' })).toEqual({ kind: 'DEFERRED', smtpCode: null, response: 'connect ECONNREFUSED 127.0.0.1:1' });
    expect(failureOutcome({ responseCode: 550, response: 'x'.repeat(2000), command: 'RCPT TO' }).response.length).toBeLessThan(600);
  });

  it('follows the retry schedule, then gives up', () => {
    const schedule = [60, 300, 1800];
    expect([0, 1, 2, 3].map((n) => retryDelayMs(schedule, n))).toEqual([60_000, 300_000, 1_800_000, null]);
  });

  it('lets only a later delivery of the same job, or anyone after the stale limit, take over a claim', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const claim = { token: 't', job: 'seq:7', deliveryCount: 1, at };
    expect(mayTakeOver(claim, 'seq:7', 2, at)).toBe(true);
    expect(mayTakeOver(claim, 'seq:7', 1, at)).toBe(false);
    expect(mayTakeOver(claim, 'seq:8', 5, at)).toBe(false);
    expect(mayTakeOver(claim, 'seq:8', 1, new Date(at.getTime() + STALE_CLAIM_MS + 1))).toBe(true);
  });
});

describe('account send rate', () => {
  it('allows a burst of one second, reserves the next token when it comes soon, delays the rest', () => {
    let now = 0;
    const rate = new AccountSendRate(2, () => now);
    expect(rate.take('a', 1000)).toEqual({ waitMs: 0, reserved: true });
    expect(rate.take('a', 1000)).toEqual({ waitMs: 0, reserved: true });
    expect(rate.take('a', 1000)).toEqual({ waitMs: 500, reserved: true });
    expect(rate.take('a', 1000)).toEqual({ waitMs: 1000, reserved: true });
    expect(rate.take('a', 1000)).toEqual({ waitMs: 1500, reserved: false });
    expect(rate.take('b', 1000)).toEqual({ waitMs: 0, reserved: true });
    now = 2000;
    expect(rate.take('a', 0)).toEqual({ waitMs: 0, reserved: true });
  });
});
