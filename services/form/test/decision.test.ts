// Every double opt-in decision of the API contract "Forms" (domain/decision.ts), and the precedence between
// them when more than one applies.
import { COOLDOWN_MAILS, decide, needsSignup, utcDayStart, type DecisionInput } from '../src/domain/decision';

const input = (over: Partial<DecisionInput> = {}): DecisionInput => ({
  doubleOptIn: true,
  suppressed: false,
  signup: { outcome: 'CREATED', previousStatus: null },
  recentMailsOfForm: 0,
  mailsToAddress24h: 0,
  accountMailsToday: 0,
  accountDailyLimit: 100,
  ...over,
});
const existing = (previousStatus: NonNullable<DecisionInput['signup']>['previousStatus']) => ({ signup: { outcome: 'EXISTING' as const, previousStatus } });

test('a new address is QUEUED and mailed; so is an UNCONFIRMED one', () => {
  expect(decide(input())).toEqual({ decision: 'QUEUED', sendConfirmation: true });
  expect(decide(input(existing('UNCONFIRMED')))).toEqual({ decision: 'QUEUED', sendConfirmation: true });
});

test('an ACTIVE subscriber is SUPPRESSED_ALREADY_SUBSCRIBED, without mail', () => {
  expect(decide(input(existing('ACTIVE')))).toEqual({ decision: 'SUPPRESSED_ALREADY_SUBSCRIBED', sendConfirmation: false });
});

test.each(['UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED'] as const)('a %s subscriber is SUPPRESSED_SUBSCRIBER_POLICY', (status) => {
  expect(decide(input(existing(status)))).toEqual({ decision: 'SUPPRESSED_SUBSCRIBER_POLICY', sendConfirmation: false });
});

test('a suppressed address is SUPPRESSED_SUBSCRIBER_POLICY and Signup is not asked', () => {
  expect(needsSignup(true)).toBe(false);
  expect(needsSignup(false)).toBe(true);
  expect(decide(input({ suppressed: true, signup: null }))).toEqual({ decision: 'SUPPRESSED_SUBSCRIBER_POLICY', sendConfirmation: false });
  // Even on a single opt-in form: a suppressed address is never signed up.
  expect(decide(input({ suppressed: true, signup: null, doubleOptIn: false })).decision).toBe('SUPPRESSED_SUBSCRIBER_POLICY');
});

test("the account's subscriber quota is SUPPRESSED_SUBSCRIBER_LIMIT, on single opt-in forms too", () => {
  const limit = { signup: { outcome: 'LIMIT_REACHED' as const, previousStatus: null } };
  expect(decide(input(limit))).toEqual({ decision: 'SUPPRESSED_SUBSCRIBER_LIMIT', sendConfirmation: false });
  expect(decide(input({ ...limit, doubleOptIn: false })).decision).toBe('SUPPRESSED_SUBSCRIBER_LIMIT');
});

test('a confirmation of the same form in the last 10 minutes is CONFIRMATION_MAIL_ALREADY_SENT', () => {
  expect(decide(input({ recentMailsOfForm: 1, mailsToAddress24h: 1 }))).toEqual({ decision: 'CONFIRMATION_MAIL_ALREADY_SENT', sendConfirmation: false });
  expect(decide(input({ ...existing('UNCONFIRMED'), recentMailsOfForm: 1, mailsToAddress24h: 1 })).decision).toBe('CONFIRMATION_MAIL_ALREADY_SENT');
});

test('3 confirmations to the address in 24 h is SUPPRESSED_COOLDOWN; 2 still mail', () => {
  expect(decide(input({ mailsToAddress24h: COOLDOWN_MAILS - 1 })).decision).toBe('QUEUED');
  expect(decide(input({ mailsToAddress24h: COOLDOWN_MAILS }))).toEqual({ decision: 'SUPPRESSED_COOLDOWN', sendConfirmation: false });
  // The same form's 10-minute window is the more precise answer when both hold.
  expect(decide(input({ mailsToAddress24h: COOLDOWN_MAILS, recentMailsOfForm: 1 })).decision).toBe('CONFIRMATION_MAIL_ALREADY_SENT');
});

test("the account's daily confirmation quota is SUPPRESSED_CUSTOMER_LIMIT; 0 means no quota", () => {
  expect(decide(input({ accountMailsToday: 99, accountDailyLimit: 100 })).decision).toBe('QUEUED');
  expect(decide(input({ accountMailsToday: 100, accountDailyLimit: 100 }))).toEqual({ decision: 'SUPPRESSED_CUSTOMER_LIMIT', sendConfirmation: false });
  expect(decide(input({ accountMailsToday: 1_000_000, accountDailyLimit: 0 })).decision).toBe('QUEUED');
  // An ACTIVE subscriber needs no mail, so the quota does not apply to it.
  expect(decide(input({ ...existing('ACTIVE'), accountMailsToday: 100, accountDailyLimit: 100 })).decision).toBe('SUPPRESSED_ALREADY_SUBSCRIBED');
});

test('a single opt-in form decides null and never mails, whatever the mail counts', () => {
  for (const over of [{}, existing('ACTIVE'), existing('UNCONFIRMED'), { mailsToAddress24h: 9, recentMailsOfForm: 9, accountMailsToday: 500 }]) {
    expect(decide(input({ ...over, doubleOptIn: false }))).toEqual({ decision: null, sendConfirmation: false });
  }
});

test('the daily quota counts from the start of the UTC day', () => {
  expect(utcDayStart(new Date('2026-11-24T23:59:59.999Z')).toISOString()).toBe('2026-11-24T00:00:00.000Z');
  expect(utcDayStart(new Date('2026-11-25T00:00:00.000Z')).toISOString()).toBe('2026-11-25T00:00:00.000Z');
});
