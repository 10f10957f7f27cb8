// The confirm link's token and its setting: bound to the account and submission, expiring, verified
// with a rotated secret kept in TRACKING_SECRET_PREVIOUS, refused when edited or of another key; and
// FORM_CONFIRM_TOKEN_DAYS (default 7, whole days of at least 1).
import crypto from 'node:crypto';
import { loadConfig } from '@mailer/kit';
import { configSchema, loadFormConfig } from '../src/config';
import { confirmTokens } from '../src/app/confirm-token';
import { confirmationValues, NO_FORM, readableUtc } from '../src/app/confirmation-mail';

const secret = () => crypto.randomBytes(32).toString('base64url');
const BASE = 'https://mail.example.test';
const A = crypto.randomUUID();
const S = crypto.randomUUID();

it('signs a link under PUBLIC_BASE_URL that verifies until its expiry, then is expired, never invalid', () => {
  const tokens = confirmTokens({ PUBLIC_BASE_URL: BASE, TRACKING_SECRET: secret(), TRACKING_SECRET_PREVIOUS: [] });
  const expiresAt = new Date('2026-12-01T10:00:00Z');
  const url = tokens.url(A, S, expiresAt);
  expect(url.startsWith(`${BASE}/public/confirm/`)).toBe(true);
  const token = url.split('/').pop()!;
  expect(tokens.verify(token, new Date('2026-12-01T09:59:59Z'))).toEqual({ ok: true, claims: { purpose: 'confirm', accountId: A, submissionId: S, expiresAt: expiresAt.getTime() } });
  expect(tokens.verify(token, expiresAt)).toMatchObject({ ok: false, reason: 'expired', claims: { accountId: A, submissionId: S } });
  const edited = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
  expect(tokens.verify(edited, new Date('2026-11-01T00:00:00Z'))).toEqual({ ok: false, reason: 'invalid' });
});

it('a link signed before a rotation verifies while the old secret is in TRACKING_SECRET_PREVIOUS; another key never', () => {
  const old = secret();
  const before = confirmTokens({ PUBLIC_BASE_URL: BASE, TRACKING_SECRET: old, TRACKING_SECRET_PREVIOUS: [] });
  const token = before.url(A, S, new Date(Date.now() + 86_400_000)).split('/').pop()!;
  expect(confirmTokens({ PUBLIC_BASE_URL: BASE, TRACKING_SECRET: secret(), TRACKING_SECRET_PREVIOUS: [old] }).verify(token, new Date()).ok).toBe(true);
  expect(confirmTokens({ PUBLIC_BASE_URL: BASE, TRACKING_SECRET: secret(), TRACKING_SECRET_PREVIOUS: [] }).verify(token, new Date())).toEqual({ ok: false, reason: 'invalid' });
});

it('FORM_CONFIRM_TOKEN_DAYS: 7 by default, whole days from 1', () => {
  const base = { TRACKING_SECRET: secret() };
  expect(loadFormConfig(base).FORM_CONFIRM_TOKEN_DAYS).toBe(7);
  expect(loadFormConfig({ ...base, FORM_CONFIRM_TOKEN_DAYS: '2' }).FORM_CONFIRM_TOKEN_DAYS).toBe(2);
  const refuse = (message: string): never => {
    throw new Error(message);
  };
  for (const bad of ['0', '1.5', 'x']) expect(() => loadConfig(configSchema, { ...base, FORM_CONFIRM_TOKEN_DAYS: bad }, refuse)).toThrow(/FORM_CONFIRM_TOKEN_DAYS/);
});

it('the values a confirmation template gets', () => {
  const at = new Date('2026-03-05T07:04:00Z');
  expect(readableUtc(at)).toBe('5 March 2026, 07:04 UTC');
  expect(confirmationValues({ id: 'f', name: 'News' }, 'u', at, 7)).toEqual({ confirmUrl: 'u', form: { id: 'f', name: 'News' }, expiresAt: '2026-03-05T07:04:00.000Z', expiresOn: '5 March 2026, 07:04 UTC', expiryDays: 7 });
  // a consent signup of a custom event has no form: `form` is null (the built-in template says "our mailing list")
  expect(confirmationValues(NO_FORM, 'u', at, 7)).toMatchObject({ confirmUrl: 'u', form: null });
});
