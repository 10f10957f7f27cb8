import { fixedClock, randomIds, sequentialIds, systemClock } from '../src/clock';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('clock and ids', () => {
  it('the system clock and random ids are the real ones', () => {
    const before = Date.now();
    const t = systemClock.now().getTime();
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
    const a = randomIds.newId();
    expect(a).toMatch(UUID_V4);
    expect(randomIds.newId()).not.toBe(a);
  });

  it('a fixed clock stands still until set or advanced, and hands out copies', () => {
    const clock = fixedClock('2024-02-29T12:00:00.000Z');
    const first = clock.now();
    first.setFullYear(1999); // a caller mutating its Date does not move the clock
    expect(clock.now().toISOString()).toBe('2024-02-29T12:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2024-02-29T12:00:01.500Z');
    clock.set(new Date('2030-01-01T00:00:00Z'));
    expect(clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(() => fixedClock('yesterday')).toThrow(/not a time/);
  });

  it('sequential ids are valid UUID v4 strings counting up, independent per source', () => {
    const ids = sequentialIds();
    expect([ids.newId(), ids.newId()]).toEqual(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']);
    for (let i = 0; i < 20; i++) expect(ids.newId()).toMatch(UUID_V4);
    expect(sequentialIds().newId()).toBe('00000000-0000-4000-8000-000000000001');
  });
});
