import { randomBytes } from 'node:crypto';
import { createKeyCrypto, generateApiKey, looksLikeApiKey, maskApiKey, parseMasterKey, redactApiKeys } from '../src/accounts/api-key';

const master = () => randomBytes(32).toString('base64');

describe('API key material', () => {
  it('generates mk_ + 40 base62 characters, never the same twice', () => {
    const keys = new Set(Array.from({ length: 500 }, generateApiKey));
    expect(keys.size).toBe(500);
    for (const k of keys) expect(k).toMatch(/^mk_[A-Za-z0-9]{40}$/);
  });

  it('recognises only well-formed keys (masked, blank, truncated, padded are not keys)', () => {
    const key = generateApiKey();
    expect(looksLikeApiKey(key)).toBe(true);
    expect(looksLikeApiKey(maskApiKey(key))).toBe(false);
    expect(maskApiKey(key)).toBe(`${key.slice(0, 5)}*****`);
    for (const bad of ['', ' ', key.slice(0, -1), `${key}x`, ` ${key}`, `${key} `, key.replace('mk_', 'xx_'), `${key.slice(0, -1)}-`]) {
      expect(looksLikeApiKey(bad)).toBe(false);
    }
  });

  it('seals and opens a key; the account id is bound in', () => {
    const c = createKeyCrypto(master());
    const key = generateApiKey();
    const sealed = c.seal(key, 'acc-1');
    expect(sealed).not.toContain(key);
    expect(c.open(sealed, 'acc-1')).toBe(key);
    expect(() => c.open(sealed, 'acc-2')).toThrow();
    expect(c.seal(key, 'acc-1')).not.toBe(sealed); // fresh IV every time
  });

  it('refuses a tampered or foreign ciphertext', () => {
    const c = createKeyCrypto(master());
    const sealed = c.seal(generateApiKey(), 'a');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[2], 'base64url');
    ct[0] ^= 1;
    parts[2] = ct.toString('base64url');
    expect(() => c.open(parts.join('.'), 'a')).toThrow();
    expect(() => createKeyCrypto(master()).open(sealed, 'a')).toThrow();
    expect(() => c.open('v2.x.y.z', 'a')).toThrow(/format/);
  });

  it('lookup hash: deterministic per master key, different across master keys, compared in constant time', () => {
    const m = master();
    const a = createKeyCrypto(m);
    const b = createKeyCrypto(m);
    const other = createKeyCrypto(master());
    const key = generateApiKey();
    expect(a.lookupHash(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(a.lookupHash(key)).toBe(b.lookupHash(key));
    expect(other.lookupHash(key)).not.toBe(a.lookupHash(key));
    expect(a.lookupHash(key)).not.toBe(a.lookupHash(generateApiKey()));
    expect(a.sameHash(a.lookupHash(key), b.lookupHash(key))).toBe(true);
    expect(a.sameHash(a.lookupHash(key), other.lookupHash(key))).toBe(false);
    expect(a.sameHash(a.lookupHash(key), 'abcd')).toBe(false); // wrong length: false, no throw
  });

  it('master key must be base64 of exactly 32 bytes', () => {
    expect(parseMasterKey(master())).toHaveLength(32);
    expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => parseMasterKey('not base64!')).toThrow(/base64/);
    expect(() => parseMasterKey('')).toThrow();
  });
});

describe('redactApiKeys', () => {
  it('replaces every key-shaped run in a path, encoded or longer, and leaves other text alone', () => {
    const key = generateApiKey();
    expect(redactApiKeys(`/subscribers/${key}`)).toBe('/subscribers/mk_[redacted]');
    expect(redactApiKeys(`/a/${key}/b/${generateApiKey()}x`)).toBe('/a/mk_[redacted]/b/mk_[redacted]');
    expect(redactApiKeys(`/a/${key.slice(0, 5)}%41%42${key.slice(7)}`)).toBe('/a/mk_[redacted]');
    for (const text of ['/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', '/mk_short', `/mk_${'a'.repeat(39)}`, '/x?mk=1']) expect(redactApiKeys(text)).toBe(text);
  });
});
