import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { createKeyCrypto, generateApiKey, looksLikeApiKey, maskApiKey, redactApiKeys } from '../src/accounts/api-key';

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
    expect(c.open(sealed, 'acc-1')).toEqual({ value: key, stale: false });
    expect(() => c.open(sealed, 'acc-2')).toThrow();
    expect(c.seal(key, 'acc-1')).not.toBe(sealed); // fresh IV every time
  });

  it('holds: the sealed copy, opened with the account id, is the presented key; another account\'s copy or another key is not', () => {
    const c = createKeyCrypto(master());
    const key = generateApiKey();
    const sealed = c.seal(key, 'acc-1');
    expect(c.holds(sealed, 'acc-1', key)).toBe(true);
    expect(c.holds(sealed, 'acc-2', key)).toBe(false); // grafted onto another account
    expect(c.holds(sealed, 'acc-1', generateApiKey())).toBe(false);
    expect(c.holds(sealed, 'acc-1', key.slice(0, -1))).toBe(false);
    expect(c.holds('garbage', 'acc-1', key)).toBe(false);
  });

  it('keyring: the current master key seals and indexes; a previous one still opens (stale) and finds its hash', () => {
    const [oldMaster, newMaster] = [master(), master()];
    const before = createKeyCrypto(oldMaster);
    const key = generateApiKey();
    const sealed = before.seal(key, 'acc-1');
    const rotated = createKeyCrypto(newMaster, [oldMaster]);
    expect(rotated.open(sealed, 'acc-1')).toEqual({ value: key, stale: true });
    expect(rotated.holds(sealed, 'acc-1', key)).toBe(true);
    expect(rotated.lookupHash(key)).toBe(createKeyCrypto(newMaster).lookupHash(key));
    expect(rotated.previousLookupHashes(key)).toEqual([before.lookupHash(key)]);
    expect(createKeyCrypto(newMaster).previousLookupHashes(key)).toEqual([]);
    expect(() => createKeyCrypto(newMaster).open(sealed, 'acc-1')).toThrow(/does not open with this key/);
  });

  it('keeps the sealed format and derivation of keys sealed before keyrings existed (v1, HKDF of the master key)', () => {
    // Sealed by the former implementation (node:crypto directly): AES-256-GCM under HKDF-SHA256(master,
    // no salt, "mailer gateway api-key encryption v1"), the account id as associated data.
    const m = master();
    const encKey = Buffer.from(hkdfSync('sha256', Buffer.from(m, 'base64'), Buffer.alloc(0), 'mailer gateway api-key encryption v1', 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', encKey, iv);
    cipher.setAAD(Buffer.from('acc-1'));
    const key = generateApiKey();
    const ct = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
    const legacy = ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    expect(createKeyCrypto(m).open(legacy, 'acc-1')).toEqual({ value: key, stale: false });
    const macKey = Buffer.from(hkdfSync('sha256', Buffer.from(m, 'base64'), Buffer.alloc(0), 'mailer gateway api-key lookup v1', 32));
    expect(createKeyCrypto(m).lookupHash(key)).toBe(createHmac('sha256', macKey).update(key).digest('hex'));
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
    expect(() => c.open('v2.x.y.z', 'a')).toThrow('not a sealed value');
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

  it('master keys must be base64 of exactly 32 bytes', () => {
    expect(() => createKeyCrypto(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => createKeyCrypto(master(), ['not base64!'])).toThrow(/base64/);
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
