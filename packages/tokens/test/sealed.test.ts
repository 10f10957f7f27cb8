import { randomBytes } from 'node:crypto';
import { sealer } from '../src';

const MASTER = randomBytes(32);
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n-----END PRIVATE KEY-----\n';

describe('sealer', () => {
  it('round-trips, never holds the plaintext, and seals the same value differently each time', () => {
    const s = sealer(MASTER, 'dkim-private-key');
    const a = s.seal(PEM, 'account-a:example.com');
    const b = s.seal(PEM, 'account-a:example.com');
    expect(a).not.toEqual(b);
    expect(a).toMatch(/^s1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(a).not.toContain('PRIVATE');
    expect(s.open(a, 'account-a:example.com')).toBe(PEM);
    expect(sealer(Buffer.from(MASTER), 'dkim-private-key').open(b, 'account-a:example.com')).toBe(PEM); // another replica
  });

  it('does not open for another context, another use, another master, or after any edit', () => {
    const sealed = sealer(MASTER, 'dkim-private-key').seal(PEM, 'account-a:example.com');
    expect(() => sealer(MASTER, 'dkim-private-key').open(sealed, 'account-b:example.com')).toThrow();
    expect(() => sealer(MASTER, 'webhook-secret').open(sealed, 'account-a:example.com')).toThrow();
    expect(() => sealer(randomBytes(32), 'dkim-private-key').open(sealed, 'account-a:example.com')).toThrow();
    const parts = sealed.split('.');
    for (let i = 1; i < 4; i++) {
      const edited = [...parts];
      edited[i] = (edited[i][0] === 'A' ? 'B' : 'A') + edited[i].slice(1);
      expect(() => sealer(MASTER, 'dkim-private-key').open(edited.join('.'), 'account-a:example.com')).toThrow();
    }
    expect(() => sealer(MASTER, 'dkim-private-key').open(`${sealed}.x`, 'account-a:example.com')).toThrow('not a sealed value');
    expect(() => sealer(MASTER, 'dkim-private-key').open('v1.a.b.c', 'account-a:example.com')).toThrow('not a sealed value');
  });

  it('opens values sealed under a previous master (keyring: current first), and seals with the current one', () => {
    const previous = randomBytes(32);
    const old = sealer(previous, 'dkim-private-key').seal(PEM, 'ctx');
    const ring = sealer([MASTER, previous], 'dkim-private-key');
    expect(ring.open(old, 'ctx')).toBe(PEM);
    expect(sealer(MASTER, 'dkim-private-key').open(ring.seal(PEM, 'ctx'), 'ctx')).toBe(PEM);
  });

  it('refuses short master secrets and an empty keyring', () => {
    expect(() => sealer(randomBytes(16), 'x')).toThrow(/at least 32 bytes/);
    expect(() => sealer([], 'x')).toThrow(/at least one/);
  });
});
