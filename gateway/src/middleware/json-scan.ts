import { ApiError } from '../errors';

/**
 * Nesting limit of every JSON body (objects and arrays; the top-level value is level 1). Deeper
 * bodies were a 500: JSON.parse copes, but JSON.stringify (event storage, idempotency hashing)
 * and recursive walks overflow the stack around 10,000 levels. No operation's schema needs more
 * than about 10 levels; free-form `properties` of events get the rest.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
/** A number literal with this many digits (or any exponent) may be beyond the double range. */
const SUSPICIOUS_DIGITS = 309;

export const jsonTooDeep = () =>
  new ApiError(400, 'json_too_deep', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep (objects and arrays).`);

/**
 * One pass over the raw body bytes, before JSON.parse and without recursion (so it cannot
 * overflow itself): throws `json_too_deep` past MAX_JSON_DEPTH, and tells whether some number
 * literal may not fit a double (an exponent, or 309+ digits) or some string may hold an unpaired
 * surrogate escape, so that only such rare bodies get the walk of `rejectUnrepresentable`. Strings are skipped with Buffer.indexOf (native), so the
 * cost is per structural byte. Malformed JSON is left to JSON.parse: the scan only counts.
 * UTF-8 multibyte sequences never contain ASCII bytes, so scanning bytes is exact.
 */
export function scanJson(buf: Buffer): Suspicions {
  let depth = 0;
  let digits = 0;
  let mayOverflowNumbers = false;
  const n = buf.length;
  for (let i = 0; i < n; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      i = closingQuote(buf, i);
      if (i < 0) break; // unterminated: JSON.parse reports it
      digits = 0;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) throw jsonTooDeep();
      digits = 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      digits = 0;
    } else if (c >= ZERO && c <= NINE) {
      if (++digits >= SUSPICIOUS_DIGITS) mayOverflowNumbers = true;
    } else if ((c === LOWER_E || c === UPPER_E) && digits > 0) {
      mayOverflowNumbers = true; // an exponent ('e' in true/false follows a letter, never a digit)
    } else if (c !== DOT) {
      digits = 0;
    }
  }
  // `\ud800`-`\udfff` escapes may be unpaired surrogates (two native searches, no per-byte work).
  const maySurrogates = buf.indexOf('\\ud') >= 0 || buf.indexOf('\\uD') >= 0;
  // A `__proto__` member name holds "proto" as written or as `\u00xx` escapes of its letters.
  const mayProtoKey = buf.indexOf('proto') >= 0 || buf.indexOf('\\u00') >= 0;
  return { mayOverflowNumbers, maySurrogates, mayProtoKey };
}

/** What `rejectUnrepresentable` must look for in the parsed body (nothing, for nearly every body). */
export interface Suspicions {
  mayOverflowNumbers: boolean;
  maySurrogates: boolean;
  mayProtoKey: boolean;
}

/** Index of the quote closing the string opened at `open` (one not escaped by an odd run of backslashes), or -1. */
function closingQuote(buf: Buffer, open: number): number {
  let j = buf.indexOf(QUOTE, open + 1);
  while (j >= 0) {
    let backslashes = 0;
    for (let k = j - 1; buf[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
    j = buf.indexOf(QUOTE, j + 1);
  }
  return -1;
}

/** An unpaired UTF-16 surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const refuse = (path: string, problem: string) => new ApiError(400, 'validation_failed', `${path} ${problem}.`, [{ path, problem }]);

/**
 * Values JSON.parse accepts that cannot be kept as sent, refused whole like malformed JSON, naming
 * the first such member (iterative; the depth is already bounded by scanJson):
 * - a number beyond the double range (1e400, 400 digits) reads as ±Infinity, which JSON.stringify
 *   writes as null (free-form event properties) and gRPC cannot carry;
 * - a `\ud800`-style escape without its pair is no Unicode text: protobuf encoding stored it as
 *   U+FFFD (a subscriber named "A\udfffB" read back as "A�B");
 * Returns the path of the first member named `__proto__`, if any (see refuseReservedMember).
 */
export function rejectUnrepresentable(value: unknown, look: Suspicions): string | undefined {
  let reserved: string | undefined;
  const stack: Array<[unknown, string]> = [[value, 'body']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'number') {
      if (look.mayOverflowNumbers && !Number.isFinite(v)) throw refuse(path, 'is a number out of range (beyond ±1.8e308)');
    } else if (typeof v === 'string') {
      if (look.maySurrogates && LONE_SURROGATE.test(v)) throw refuse(path, 'holds an unpaired UTF-16 surrogate escape (text must be valid Unicode)');
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i];
        if (look.maySurrogates && LONE_SURROGATE.test(key)) throw refuse(path, 'has a member name with an unpaired UTF-16 surrogate escape (text must be valid Unicode)');
        if (look.mayProtoKey && key === '__proto__') reserved ??= `${path}.__proto__`;
        stack.push([member, `${path}.${key}`]);
      }
    }
  }
  return reserved;
}

// Bodies holding a `__proto__` member, with its path. JSON.parse keeps such a member as an own
// property, but the storage layer (mongoose) drops it on save: it could not be read back as sent.
// It is refused after schema validation, so that where the schema allows no unknown member it is
// `unknown_property` like any other name, and `validation_failed` inside free-form values.
const reservedMembers = new WeakMap<object, string>();

export function noteReservedMember(body: object, path: string): void {
  reservedMembers.set(body, path);
}

/** Throws `400 validation_failed` naming the body's `__proto__` member, if the parser noted one. */
export function refuseReservedMember(body: unknown): void {
  const path = typeof body === 'object' && body !== null ? reservedMembers.get(body) : undefined;
  if (path) throw refuse(path, 'is a reserved member name that cannot be stored');
}
