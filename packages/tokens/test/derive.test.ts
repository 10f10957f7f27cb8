import { createHmac, randomUUID } from 'node:crypto';
import { deriveKeyring, deriveSecret, signToken, TOKEN_PURPOSES, verifyToken } from '../src';

// One operator master secret -> an independent key per purpose (docs/configuration.md: TRACKING_SECRET "or
// derived from one master secret").
const MASTER = 'master-secret-0123456789abcdef-0123456789abcdef';
const claims = { purpose: 'open' as const, accountId: randomUUID(), messageId: randomUUID() };

describe('deriveSecret', () => {
  it('is deterministic: a restart or another replica derives the same key', () => {
    expect(deriveSecret(MASTER, 'open').equals(deriveSecret(Buffer.from(MASTER), 'open'))).toBe(true);
    expect(deriveSecret(MASTER, 'open')).toHaveLength(32);
  });

  it('matches HKDF-SHA256 (RFC 5869) with the documented salt and info', () => {
    // extract + expand by hand for a 32-byte output (one block)
    const prk = createHmac('sha256', 'mailer.tokens.v1').update(MASTER).digest();
    const okm = createHmac('sha256', prk).update('purpose:click').update(Buffer.from([1])).digest();
    expect(deriveSecret(MASTER, 'click').equals(okm)).toBe(true);
  });

  it('gives every purpose and every master its own key, none equal to the master', () => {
    const keys = new Set<string>();
    for (const master of [MASTER, `${MASTER}!`]) {
      for (const purpose of [...TOKEN_PURPOSES, 'bounce']) keys.add(deriveSecret(master, purpose).toString('hex'));
    }
    expect(keys.size).toBe(10);
    expect(keys.has(Buffer.from(MASTER).toString('hex'))).toBe(false);
  });

  it('a token signed with one purpose key does not verify with another purpose key or the master', () => {
    const token = signToken(deriveSecret(MASTER, 'open'), claims);
    expect(verifyToken(deriveSecret(MASTER, 'open'), token, 'open')).toEqual(claims);
    expect(verifyToken(deriveSecret(MASTER, 'click'), token, 'open')).toBeNull();
    expect(verifyToken(MASTER, token, 'open')).toBeNull();
  });

  it('refuses a short master secret or an empty purpose', () => {
    expect(() => deriveSecret('too-short', 'open')).toThrow(/32 bytes/);
    expect(() => deriveSecret(MASTER, '')).toThrow(/purpose/);
  });
});

describe('deriveKeyring', () => {
  it('derives current then previous keys, so a master-secret rotation keeps old links working', () => {
    const previous = 'previous-master-0123456789abcdef-0123456789';
    const oldToken = signToken(deriveSecret(previous, 'open'), claims);
    const keyring = deriveKeyring([MASTER, previous], 'open');
    expect(keyring.map((k) => k.toString('hex'))).toEqual([deriveSecret(MASTER, 'open').toString('hex'), deriveSecret(previous, 'open').toString('hex')]);
    expect(verifyToken(keyring, oldToken, 'open')).toEqual(claims);
    expect(verifyToken(deriveKeyring(MASTER, 'open'), oldToken, 'open')).toBeNull();
  });
});
