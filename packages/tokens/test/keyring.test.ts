// The sealer's keyring and formats beyond test/sealed.test.ts: `unseal` says when a previous key
// sealed a value (its owner seals it again), a retired key opens nothing, `isSealed` tells a sealed
// value from one stored in clear, and keySealer keeps the gateway's `v1` format.
import { randomBytes } from 'node:crypto';
import { deriveKey, keySealer, parseMasterKey, SealedValueError, sealer } from '../src';

const master = () => randomBytes(32);

it('keyring: the current key seals; a previous one still opens and says stale; a retired key opens nothing', () => {
  const [oldMaster, newMaster] = [master(), master()];
  const before = sealer(oldMaster, 'webhook-signing-secret').seal('kept across a rotation', 'ctx');
  const rotated = sealer([newMaster, oldMaster], 'webhook-signing-secret');
  expect(rotated.unseal(before, 'ctx')).toEqual({ value: 'kept across a rotation', stale: true });
  const again = rotated.seal('kept across a rotation', 'ctx');
  expect(rotated.unseal(again, 'ctx')).toEqual({ value: 'kept across a rotation', stale: false });
  expect(sealer(newMaster, 'webhook-signing-secret').open(again, 'ctx')).toBe('kept across a rotation');
  expect(() => sealer(newMaster, 'webhook-signing-secret').open(before, 'ctx')).toThrow(SealedValueError);
});

it('isSealed tells sealed values from clear ones; empty and non-ASCII values round-trip', () => {
  const s = sealer(master(), 'x');
  const clear = `whsec_${randomBytes(32).toString('base64')}`;
  expect(s.isSealed(s.seal(clear, 'c'))).toBe(true);
  for (const other of [clear, '', 'v1.a.b.c', 's1.a.b', `${s.seal('x', 'c')}.x`]) expect(s.isSealed(other)).toBe(false);
  expect(s.open(s.seal('', 'c'), 'c')).toBe('');
  expect(s.open(s.seal('ünïcødé ✓', 'c'), 'c')).toBe('ünïcødé ✓');
});

it('keySealer: explicit keys and format tag (the gateway API keys: v1, HKDF of the master key without salt)', () => {
  const m = master();
  const v1 = keySealer([deriveKey(m, 'api-key')], 'v1');
  const sealed = v1.seal('mk_value', 'acc-1');
  expect(sealed).toMatch(/^v1\./);
  expect(v1.open(sealed, 'acc-1')).toBe('mk_value');
  expect(() => sealer(m, 'api-key').open(sealed, 'acc-1')).toThrow('not a sealed value');
  expect(deriveKey(m, 'a').equals(deriveKey(m, 'a'))).toBe(true);
  expect(deriveKey(m, 'a').equals(deriveKey(m, 'b'))).toBe(false);
  expect(() => keySealer([], 'v1')).toThrow(TypeError);
  expect(() => keySealer([randomBytes(16)], 'v1')).toThrow(TypeError);
});

it('master keys are base64 of exactly 32 bytes', () => {
  const m = master();
  expect(parseMasterKey(` ${m.toString('base64')}\n`)).toEqual(m);
  expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes \(got 16\)/);
  expect(() => parseMasterKey('not base64!')).toThrow(/base64/);
  expect(() => parseMasterKey('')).toThrow();
});
