import { randomBytes } from 'node:crypto';
import {
  canonicalJson,
  responseKeyring,
  idempotencyRecordKey,
  IdempotencyStore,
  isValidIdempotencyKey,
  requestFingerprint,
} from '../src/idempotency/store';
import { memoryKv } from './support/memory-kv';

describe('idempotency keys and fingerprints', () => {
  it('accepts 1-255 printable ASCII characters without outer spaces', () => {
    for (const ok of ['a', 'x'.repeat(255), 'order-1:retry 2', '~!@#$%^&*()']) expect(isValidIdempotencyKey(ok)).toBe(true);
    for (const bad of ['', ' ', ' a', 'a ', 'x'.repeat(256), 'tab\there', 'ü', 'new\nline']) expect(isValidIdempotencyKey(bad)).toBe(false);
  });

  it('fingerprint ignores member order, not values, method or path', () => {
    const a = requestFingerprint('POST', '/subscribers', { email: 'a@b.c', firstName: 'A', nested: { x: 1, y: [1, 2] } });
    expect(requestFingerprint('post', '/subscribers', { nested: { y: [1, 2], x: 1 }, firstName: 'A', email: 'a@b.c' })).toBe(a);
    expect(requestFingerprint('POST', '/subscribers', { email: 'a@b.c', firstName: 'B', nested: { x: 1, y: [1, 2] } })).not.toBe(a);
    expect(requestFingerprint('POST', '/subscribers', { email: 'a@b.c', firstName: 'A', nested: { x: 1, y: [2, 1] } })).not.toBe(a);
    expect(requestFingerprint('POST', '/events', { email: 'a@b.c', firstName: 'A', nested: { x: 1, y: [1, 2] } })).not.toBe(a);
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ b: null, a: 'x' })).toBe('{"a":"x","b":null}');
  });

  it('record keys are per account and safe for KV', () => {
    const k = idempotencyRecordKey('acc', 'any key / with * > chars');
    expect(k).toMatch(/^acc\.[0-9a-f]{64}$/);
    expect(idempotencyRecordKey('other', 'any key / with * > chars')).not.toBe(k);
  });
});

describe('IdempotencyStore', () => {
  let clock = 0;
  const make = () => new IdempotencyStore(memoryKv(), responseKeyring(randomBytes(32)), 60_000, () => clock);
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('first begin starts; same request while in flight -> in_progress; after complete -> replay', async () => {
    const store = make();
    const first = await store.begin('k', 'fp');
    expect(first.kind).toBe('started');
    expect(await store.begin('k', 'fp')).toEqual({ kind: 'in_progress' });
    const response = { status: 201, body: { id: 1 }, headers: { location: '/x/1' } };
    expect(await store.complete('k', (first as { revision: number }).revision, 'fp', response)).toBe(true);
    expect(await store.begin('k', 'fp')).toEqual({ kind: 'replay', response });
  });

  it('a different request with the same key -> mismatch, in flight or complete', async () => {
    const store = make();
    const first = (await store.begin('k', 'fp')) as { revision: number };
    expect(await store.begin('k', 'other')).toEqual({ kind: 'mismatch' });
    await store.complete('k', first.revision, 'fp', { status: 200, body: {}, headers: {} });
    expect(await store.begin('k', 'other')).toEqual({ kind: 'mismatch' });
  });

  it('an expired lease (owner died) is taken over; the late owner cannot overwrite', async () => {
    const store = make();
    const dead = (await store.begin('k', 'fp')) as { revision: number };
    clock += 60_001;
    const takeover = await store.begin('k', 'fp');
    expect(takeover.kind).toBe('started');
    expect(await store.complete('k', dead.revision, 'fp', { status: 201, body: 'late', headers: {} })).toBe(false);
    expect(await store.begin('k', 'fp')).toEqual({ kind: 'in_progress' });
  });

  it('abandon frees the key for a retry (5xx are not stored)', async () => {
    const store = make();
    const first = (await store.begin('k', 'fp')) as { revision: number };
    await store.abandon('k', first.revision);
    expect((await store.begin('k', 'fp')).kind).toBe('started');
  });

  it('concurrent begins: exactly one starts', async () => {
    const store = make();
    const results = await Promise.all(Array.from({ length: 10 }, () => store.begin('k', 'fp')));
    expect(results.filter((r) => r.kind === 'started')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_progress')).toHaveLength(9);
  });
});
