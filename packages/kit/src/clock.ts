import { randomUUID } from 'node:crypto';

/**
 * Where use cases get the time and new ids from: the service context in a process, a fixed clock
 * and predictable ids in a unit test. Use cases take them as dependencies instead of calling
 * `new Date()` / `randomUUID()`, so a test can assert on exact timestamps and ids.
 */
export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A new UUID v4 (lowercase), the form every service stores. */
  newId(): string;
}

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdSource = { newId: () => randomUUID() };

/** A clock that stands still until moved: for tests. */
export interface FixedClock extends Clock {
  set(at: Date | string): void;
  advance(ms: number): void;
}

export function fixedClock(at: Date | string = '2025-01-01T00:00:00.000Z'): FixedClock {
  let current = new Date(at).getTime();
  if (Number.isNaN(current)) throw new Error(`fixedClock: not a time: ${String(at)}`);
  return {
    now: () => new Date(current),
    set(next) {
      current = new Date(next).getTime();
    },
    advance(ms) {
      current += ms;
    },
  };
}

/**
 * Predictable ids for tests: valid UUID v4 strings counting up from 1
 * (`00000000-0000-4000-8000-000000000001`, ...), so they pass the services' UUID checks.
 */
export function sequentialIds(): IdSource {
  let n = 0;
  return {
    newId() {
      n += 1;
      return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    },
  };
}
