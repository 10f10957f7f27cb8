/**
 * int64 values travel over gRPC as decimal strings (ts-proto forceLong=string, so nothing above
 * 2^53 is silently rounded); the API answers JSON numbers. Counts never come near 2^53, so a
 * value that does is a bug worth a 500 rather than a wrong number.
 */
export function int64(value: string | undefined): number {
  if (value === undefined || value === '') return 0; // proto3 default
  if (!/^-?\d+$/.test(value)) throw new Error(`int64 value ${JSON.stringify(value)} is not a decimal integer`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int64 value ${value} is beyond 2^53`);
  return n;
}

/** A required message member that proto3 makes optional: its absence is a service bug. */
export function present<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`the service answered without ${what}`);
  return value;
}
