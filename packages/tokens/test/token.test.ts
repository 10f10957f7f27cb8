import { randomBytes, randomUUID } from 'node:crypto';
import {
  MAX_TOKEN_LENGTH,
  signToken,
  TOKEN_PURPOSES,
  verifyToken,
  verifyTokenResult,
  type TokenClaims,
  type TokenPurpose,
} from '../src';

// Signed public-link tokens (the API contract "Public web surface"): what a reader's URL can and cannot carry.
const SECRET = 'current-secret-0123456789abcdef-0123456789';
const OLD = 'previous-secret-0123456789abcdef-012345678';
const OTHER = 'someone-else-0123456789abcdef-0123456789ab';
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const clock = { now: () => NOW };
const WEEK = 7 * 24 * 3600 * 1000;
const accountId = randomUUID();
const messageId = randomUUID();

const samples: { [P in TokenPurpose]: TokenClaims<P> } = {
  open: { purpose: 'open', accountId, messageId },
  click: { purpose: 'click', accountId, messageId, linkIndex: 7 },
  unsubscribe: { purpose: 'unsubscribe', accountId, subscriberId: randomUUID(), topicId: randomUUID() },
  confirm: { purpose: 'confirm', accountId, submissionId: randomUUID() },
};
const options = (p: TokenPurpose) => (p === 'confirm' ? { expiresAt: NOW + WEEK } : {});
const tokenOf = (p: TokenPurpose, secret = SECRET) => signToken(secret, samples[p] as TokenClaims<TokenPurpose>, options(p));
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe.each(TOKEN_PURPOSES)('%s token', (purpose) => {
  const token = tokenOf(purpose);

  it('round-trips its claims, is URL-safe and short', () => {
    const expected = { ...samples[purpose], ...(purpose === 'confirm' ? { expiresAt: NOW + WEEK } : {}) };
    expect(verifyToken(SECRET, token, purpose, clock)).toEqual(expected);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token.length).toBeLessThanOrEqual(purpose === 'open' || purpose === 'click' ? 120 : 160);
  });

  it('refuses every single-character edit', () => {
    for (let i = 0; i < token.length; i++) {
      for (const c of ALPHABET) {
        if (c === token[i]) continue;
        const edited = token.slice(0, i) + c + token.slice(i + 1);
        if (verifyToken(SECRET, edited, purpose, clock) !== null) throw new Error(`edit at ${i} to ${c} verified`);
      }
    }
  });

  it('refuses every truncation and extension', () => {
    for (let n = 0; n < token.length; n++) expect(verifyToken(SECRET, token.slice(0, n), purpose, clock)).toBeNull();
    for (const tail of ['A', 'AA', 'AAA', 'AAAA', '-', '_x', token]) expect(verifyToken(SECRET, token + tail, purpose, clock)).toBeNull();
    expect(verifyToken(SECRET, `${token}=`, purpose, clock)).toBeNull();
    expect(verifyToken(SECRET, ` ${token}`, purpose, clock)).toBeNull();
  });

  it('never verifies as another purpose', () => {
    for (const other of TOKEN_PURPOSES.filter((p) => p !== purpose)) {
      expect(verifyTokenResult(SECRET, token, other, clock)).toEqual({ ok: false, reason: 'invalid' });
    }
  });

  it('refuses another secret', () => {
    expect(verifyToken(OTHER, token, purpose, clock)).toBeNull();
    expect(verifyToken(Buffer.from(SECRET.toUpperCase()), token, purpose, clock)).toBeNull();
  });
});

describe('account binding', () => {
  it('a token signed for another account differs and carries that account only', () => {
    const otherAccount = randomUUID();
    const mine = signToken(SECRET, { purpose: 'open', accountId, messageId });
    const theirs = signToken(SECRET, { purpose: 'open', accountId: otherAccount, messageId });
    expect(theirs).not.toBe(mine);
    expect(verifyToken(SECRET, theirs, 'open')?.accountId).toBe(otherAccount);
  });

  it('swapping the account bytes of a valid token breaks it', () => {
    const otherAccount = randomUUID();
    const mine = Buffer.from(signToken(SECRET, { purpose: 'click', accountId, messageId, linkIndex: 0 }), 'base64url');
    const theirs = Buffer.from(signToken(SECRET, { purpose: 'click', accountId: otherAccount, messageId, linkIndex: 0 }), 'base64url');
    // body = version, flags, 0x00 + 16 account bytes, ...: graft the other account into my token.
    const grafted = Buffer.concat([mine.subarray(0, 3), theirs.subarray(3, 19), mine.subarray(19)]);
    expect(verifyToken(SECRET, grafted.toString('base64url'), 'click')).toBeNull();
    // and the same for the message and link index: mine's tag with theirs's body.
    const swapped = Buffer.concat([theirs.subarray(0, theirs.length - 16), mine.subarray(mine.length - 16)]);
    expect(verifyToken(SECRET, swapped.toString('base64url'), 'click')).toBeNull();
  });
});

describe('expiry', () => {
  const token = signToken(SECRET, samples.confirm, { expiresAt: new Date(NOW + WEEK) });

  it('verifies until the expiry and not from it on; expired is told apart from invalid', () => {
    expect(verifyToken(SECRET, token, 'confirm', { now: () => NOW + WEEK - 1 })).not.toBeNull();
    expect(verifyToken(SECRET, token, 'confirm', { now: () => NOW + WEEK })).toBeNull();
    const result = verifyTokenResult(SECRET, token, 'confirm', { now: () => NOW + WEEK + 1 });
    expect(result).toEqual({ ok: false, reason: 'expired', claims: { ...samples.confirm, expiresAt: NOW + WEEK } });
    // an edited expired token is invalid, not "expired": nobody learns what a forgery would have said
    const edited = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
    expect(verifyTokenResult(SECRET, edited, 'confirm', { now: () => NOW + 2 * WEEK })).toEqual({ ok: false, reason: 'invalid' });
  });

  it('uses the real clock by default', () => {
    const past = signToken(SECRET, samples.open, { expiresAt: Date.now() - 1000 });
    const future = signToken(SECRET, samples.open, { expiresAt: Date.now() + 60_000 });
    expect(verifyToken(SECRET, past, 'open')).toBeNull();
    expect(verifyToken(SECRET, future, 'open')).not.toBeNull();
  });

  it('keeps whole seconds, rounded down (never later than asked)', () => {
    const t = signToken(SECRET, samples.open, { expiresAt: NOW + 1999 });
    expect(verifyToken(SECRET, t, 'open', clock)?.expiresAt).toBe(NOW + 1000);
  });

  it('a confirmation token cannot be signed without an expiry', () => {
    expect(() => signToken(SECRET, samples.confirm)).toThrow(/expiresAt/);
  });
});

describe('key rotation', () => {
  const old = tokenOf('click', OLD);
  const current = tokenOf('click', SECRET);

  it('before rotation, a keyring without the new secret refuses its tokens', () => {
    expect(verifyToken([OLD], current, 'click')).toBeNull();
    expect(verifyToken([OLD], old, 'click')).not.toBeNull();
  });

  it('after rotation, tokens of the current and the previous secret verify; new ones use the current', () => {
    const keyring = [SECRET, OLD];
    expect(verifyToken(keyring, old, 'click')).toEqual(samples.click);
    expect(verifyToken(keyring, current, 'click')).toEqual(samples.click);
    expect(signToken(keyring, samples.click)).toBe(current);
  });

  it('once the previous secret is retired its tokens stop verifying', () => {
    expect(verifyToken([SECRET], old, 'click')).toBeNull();
  });

  it('refuses an empty keyring or a short secret, whatever the token', () => {
    expect(() => verifyToken([], current, 'click')).toThrow(/secret/);
    expect(() => verifyToken('short', 'x', 'click')).toThrow(/32 bytes/);
    expect(() => signToken([], samples.open)).toThrow(/secret/);
    expect(() => signToken(Buffer.alloc(31), samples.open)).toThrow(/32 bytes/);
  });
});

describe('limits and malformed input', () => {
  it('refuses tokens longer than the limit', () => {
    expect(verifyToken(SECRET, 'A'.repeat(10_000_000), 'open')).toBeNull();
    expect(verifyToken(SECRET, 'A'.repeat(MAX_TOKEN_LENGTH + 1), 'open')).toBeNull();
    // a genuine token padded past the limit with a valid tail is refused for its length alone
    expect(verifyToken(SECRET, tokenOf('open') + 'A'.repeat(MAX_TOKEN_LENGTH), 'open')).toBeNull();
  });

  it('refuses empty, non-string and non-base64url tokens', () => {
    for (const bad of ['', '====', 'a.b', 'abc def', '%41%41', '\u00e9\u00e9\u00e9\u00e9', null, undefined, 42, {}]) {
      expect(verifyToken(SECRET, bad as unknown as string, 'open')).toBeNull();
    }
  });

  it('a body that fits another purpose\u2019s layout still does not verify as that purpose', () => {
    // open {account, message} + expiry and confirm {account, submission} + expiry have the same layout:
    // only the purpose in the MAC input keeps a tracking link from confirming a signup.
    const open = signToken(SECRET, { purpose: 'open', accountId, messageId }, { expiresAt: NOW + WEEK });
    expect(verifyToken(SECRET, open, 'open', clock)).not.toBeNull();
    expect(verifyToken(SECRET, open, 'confirm', clock)).toBeNull();
    const confirm = signToken(SECRET, { purpose: 'confirm', accountId, submissionId: messageId }, { expiresAt: NOW + WEEK });
    expect(verifyToken(SECRET, confirm, 'open', clock)).toBeNull();
  });

  it('refuses a token whose layout is another purpose\u2019s', () => {
    const unsub = signToken(SECRET, { purpose: 'unsubscribe', accountId, messageId });
    expect(verifyToken(SECRET, unsub, 'open')).toBeNull();
    expect(verifyToken(SECRET, tokenOf('click'), 'open')).toBeNull();
  });

  it('refuses claims a purpose does not sign, and bad values', () => {
    expect(() => signToken(SECRET, { ...samples.open, url: 'https://evil.example' } as never)).toThrow(/no field url/);
    expect(() => signToken(SECRET, { purpose: 'click', accountId, messageId, linkIndex: -1 })).toThrow(/linkIndex/);
    expect(() => signToken(SECRET, { purpose: 'click', accountId, messageId, linkIndex: 1.5 })).toThrow(/linkIndex/);
    expect(() => signToken(SECRET, { purpose: 'click', accountId, messageId, linkIndex: 70000 })).toThrow(/linkIndex/);
    expect(() => signToken(SECRET, { purpose: 'open', accountId, messageId: '' })).toThrow(/messageId/);
    expect(() => signToken(SECRET, { purpose: 'open', accountId, messageId: 'x'.repeat(41) })).toThrow(/40 bytes/);
    expect(() => signToken(SECRET, { purpose: 'unsubscribe', accountId })).toThrow(/subscriberId or a messageId/);
    expect(() => signToken(SECRET, { purpose: 'nope', accountId } as never)).toThrow(/purpose/);
    expect(() => verifyToken(SECRET, 'AAAA', 'nope' as never)).toThrow(/purpose/);
    expect(() => verifyToken(SECRET, 'AAAA', 'toString' as never)).toThrow(/purpose/);
  });
});

describe('random payloads (property style)', () => {
  const randomId = () => {
    const r = Math.random();
    if (r < 0.6) return randomUUID();
    if (r < 0.8) return randomBytes(12).toString('hex'); // e.g. an ObjectId
    const chars = 'abcXYZ019._:-\u00e9\u4e2d';
    let s = '';
    for (let i = 1 + Math.floor(Math.random() * 12); i > 0; i--) s += chars[Math.floor(Math.random() * chars.length)];
    return s;
  };
  const randomClaims = (): TokenClaims<TokenPurpose> => {
    const purpose = TOKEN_PURPOSES[Math.floor(Math.random() * TOKEN_PURPOSES.length)];
    switch (purpose) {
      case 'open':
        return { purpose, accountId: randomId(), messageId: randomId() };
      case 'click':
        return { purpose, accountId: randomId(), messageId: randomId(), linkIndex: Math.floor(Math.random() * 65536) };
      case 'confirm':
        return { purpose, accountId: randomId(), submissionId: randomId() };
      default: {
        const claims: TokenClaims<'unsubscribe'> = { purpose: 'unsubscribe', accountId: randomId() };
        if (Math.random() < 0.7) claims.subscriberId = randomId();
        if (!claims.subscriberId || Math.random() < 0.5) claims.messageId = randomId();
        if (Math.random() < 0.5) claims.topicId = randomId();
        return claims;
      }
    }
  };

  it('every random claim set round-trips exactly, and a random edit never verifies', () => {
    for (let i = 0; i < 2000; i++) {
      const claims = randomClaims();
      const expiresAt = claims.purpose === 'confirm' || Math.random() < 0.3 ? (NOW + Math.floor(Math.random() * 1e9) * 1000) : undefined;
      const token = signToken(SECRET, claims, { expiresAt });
      expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
      const expected = expiresAt === undefined ? claims : { ...claims, expiresAt };
      expect(verifyToken(SECRET, token, claims.purpose, { now: () => NOW - 1 })).toEqual(expected);
      const at = Math.floor(Math.random() * token.length);
      const replacement = ALPHABET[(ALPHABET.indexOf(token[at]) + 1 + Math.floor(Math.random() * 63)) % 64];
      expect(verifyToken(SECRET, token.slice(0, at) + replacement + token.slice(at + 1), claims.purpose, { now: () => NOW - 1 })).toBeNull();
    }
  });

  it('random strings never verify', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = randomBytes(20 + Math.floor(Math.random() * 80));
      for (const purpose of TOKEN_PURPOSES) expect(verifyToken(SECRET, bytes.toString('base64url'), purpose)).toBeNull();
    }
  });
});
