// Sealed secrets: round trips bound to their context, refusal of edits and foreign values, and the
// keyring: the current key seals, previous keys open and say so (stale), a retired key opens nothing.
import { randomBytes } from 'node:crypto';
import { derivedKeyring, deriveKey, isSealed, parseMasterKey, SealedValueError, sealingKeyring } from '../src';

const key = () => randomBytes(32);

it('seals and opens under the current key; the context is bound in; a fresh IV every time', () => {
  const ring = sealingKeyring([key()]);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const sealed = ring.seal(secret, 'acc-1/sub-1');
  expect(isSealed(sealed)).toBe(true);
  expect(sealed).not.toContain(secret.slice(6, 20));
  expect(ring.open(sealed, 'acc-1/sub-1')).toEqual({ value: secret, stale: false });
  expect(() => ring.open(sealed, 'acc-2/sub-1')).toThrow(SealedValueError);
  expect(ring.seal(secret, 'acc-1/sub-1')).not.toBe(sealed);
  expect(ring.open(ring.seal('', 'c'), 'c')).toEqual({ value: '', stale: false });
  expect(ring.open(ring.seal('ünïcødé ✓', 'c'), 'c').value).toBe('ünïcødé ✓');
});

it('refuses every edited part, a foreign value and malformed input', () => {
  const ring = sealingKeyring([key()]);
  const sealed = ring.seal('secret value', 'ctx');
  const parts = sealed.split('.');
  for (const i of [1, 2, 3]) {
    const bytes = Buffer.from(parts[i], 'base64url');
    bytes[0] ^= 1;
    const edited = [...parts];
    edited[i] = bytes.toString('base64url');
    expect(() => ring.open(edited.join('.'), 'ctx')).toThrow(SealedValueError);
  }
  expect(() => sealingKeyring([key()]).open(sealed, 'ctx')).toThrow(/no key of the keyring/);
  for (const bad of ['', 'whsec_abc', 'v2.a.b.c', 'v1.a.b', `${sealed}.x`]) {
    expect(isSealed(bad)).toBe(false);
    expect(() => ring.open(bad, 'ctx')).toThrow(SealedValueError);
  }
});

it('keyring: new values under the current key; previous keys open theirs and say stale; a retired key opens nothing', () => {
  const [oldKey, newKey] = [key(), key()];
  const before = sealingKeyring([oldKey]).seal('kept across a rotation', 'ctx');
  const rotated = sealingKeyring([newKey, oldKey]);
  expect(rotated.open(before, 'ctx')).toEqual({ value: 'kept across a rotation', stale: true });
  const resealed = rotated.seal('kept across a rotation', 'ctx');
  expect(rotated.open(resealed, 'ctx')).toEqual({ value: 'kept across a rotation', stale: false });
  expect(sealingKeyring([newKey]).open(resealed, 'ctx').value).toBe('kept across a rotation');
  expect(() => sealingKeyring([newKey]).open(before, 'ctx')).toThrow(SealedValueError);
  expect(() => sealingKeyring([])).toThrow(TypeError);
  expect(() => sealingKeyring([randomBytes(16)])).toThrow(TypeError);
});

it('derived keyrings: one key per use from the same master, and the master key format', () => {
  const master = key();
  const webhook = derivedKeyring([master], 'webhook secret');
  const other = derivedKeyring([master], 'idempotency');
  expect(() => other.open(webhook.seal('x', 'c'), 'c')).toThrow(SealedValueError);
  expect(deriveKey(master, 'a').equals(deriveKey(master, 'a'))).toBe(true);
  expect(deriveKey(master, 'a').equals(master)).toBe(false);
  expect(parseMasterKey(master.toString('base64'))).toEqual(master);
  expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes \(got 16\)/);
  expect(() => parseMasterKey('not base64!')).toThrow(/base64/);
  expect(() => parseMasterKey('')).toThrow();
});
