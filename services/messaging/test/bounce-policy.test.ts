import { decideBounceEffects, softBounceThresholdReached, SOFT_BOUNCE_WINDOW_MS } from '../src/readers/domain/bounce-policy';
import type { BounceReport, RecipientStatus } from '../src/readers/domain/bounce-report';

const now = new Date('2026-11-23T12:00:00Z');
const message = { messageId: 'm1', recipient: 'Reader@Example.org', topicId: 't1' };
const noHistory = { softBounceTimes: [], now };
const daysAgo = (d: number) => new Date(now.getTime() - d * 24 * 3600 * 1000);

function rcpt(action: string, status: string | null, type: 'HARD' | 'SOFT' | null): RecipientStatus {
  return { finalRecipient: 'someone-else@example.net', action, status, type, diagnosticCode: 'smtp; 550 no such user' };
}
const dsn = (kind: 'bounce' | 'delayed' | 'delivered', ...recipients: RecipientStatus[]): BounceReport =>
  ({ kind, originalEnvelopeId: null, recipients }) as BounceReport;

describe('decideBounceEffects', () => {
  it('hard bounce: message BOUNCED, HARD_BOUNCE suppression, subscriber BOUNCED, on the message recipient', () => {
    expect(decideBounceEffects(dsn('bounce', rcpt('failed', '5.1.1', 'HARD')), message, noHistory)).toEqual([
      { type: 'messageStatus', messageId: 'm1', status: 'BOUNCED', reason: 'smtp; 550 no such user' },
      { type: 'suppress', email: 'reader@example.org', reason: 'HARD_BOUNCE' },
      { type: 'subscriberStatus', email: 'reader@example.org', status: 'BOUNCED' },
    ]);
  });

  it('a hard failure wins over soft failures and delays in one report', () => {
    const report = dsn('bounce', rcpt('delayed', '4.4.1', null), rcpt('failed', '4.2.2', 'SOFT'), rcpt('failed', '5.0.0', 'HARD'));
    expect(decideBounceEffects(report, message, noHistory).map((e) => e.type)).toEqual(['messageStatus', 'suppress', 'subscriberStatus']);
  });

  it('first soft bounce is only counted', () => {
    expect(decideBounceEffects(dsn('bounce', rcpt('failed', '4.2.2', 'SOFT')), message, noHistory)).toEqual([
      { type: 'recordSoftBounce', email: 'reader@example.org', messageId: 'm1', at: now },
    ]);
  });

  it('third soft bounce within 7 days suppresses SOFT_BOUNCES', () => {
    const effects = decideBounceEffects(dsn('bounce', rcpt('failed', '4.2.2', 'SOFT')), message, {
      softBounceTimes: [daysAgo(6), daysAgo(1)],
      now,
    });
    expect(effects).toContainEqual({ type: 'suppress', email: 'reader@example.org', reason: 'SOFT_BOUNCES' });
    expect(effects).toContainEqual(expect.objectContaining({ type: 'recordSoftBounce' }));
  });

  it('counts a bounce exactly 7 days old, not one just outside the window', () => {
    const edge = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_MS);
    expect(softBounceThresholdReached({ softBounceTimes: [edge, daysAgo(1)], now })).toBe(true);
    const outside = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_MS - 1);
    expect(softBounceThresholdReached({ softBounceTimes: [outside, daysAgo(1)], now })).toBe(false);
    const effects = decideBounceEffects(dsn('bounce', rcpt('failed', '4.2.2', 'SOFT')), message, {
      softBounceTimes: [daysAgo(8), daysAgo(1)],
      now,
    });
    expect(effects.map((e) => e.type)).toEqual(['recordSoftBounce']);
  });

  it('two soft bounces do not suppress', () => {
    expect(softBounceThresholdReached({ softBounceTimes: [daysAgo(2)], now })).toBe(false);
  });

  it('complaint: COMPLAINT suppression, subscriber COMPLAINED, unsubscribed from the mail topic', () => {
    const report: BounceReport = {
      kind: 'complaint',
      feedbackType: 'abuse',
      originalRecipient: 'other@example.net',
      originalMailFrom: null,
      originalMessageId: null,
    };
    expect(decideBounceEffects(report, message, noHistory)).toEqual([
      { type: 'suppress', email: 'reader@example.org', reason: 'COMPLAINT' },
      { type: 'subscriberStatus', email: 'reader@example.org', status: 'COMPLAINED' },
      { type: 'unsubscribeTopic', email: 'reader@example.org', topicId: 't1' },
    ]);
    expect(decideBounceEffects(report, { ...message, topicId: null }, noHistory).map((e) => e.type)).toEqual([
      'suppress',
      'subscriberStatus',
    ]);
  });

  it('success DSN marks the message DELIVERED; delays and unknown reports change nothing', () => {
    expect(decideBounceEffects(dsn('delivered', rcpt('delivered', '2.0.0', null)), message, noHistory)).toEqual([
      { type: 'messageStatus', messageId: 'm1', status: 'DELIVERED', reason: null },
    ]);
    expect(decideBounceEffects(dsn('delayed', rcpt('delayed', '4.4.1', null)), message, noHistory)).toEqual([]);
    expect(decideBounceEffects({ kind: 'unknown', reason: 'x' }, message, noHistory)).toEqual([]);
  });
});
