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
 * literal may not fit a double (an exponent, or 309+ digits), so that only such rare bodies get
 * the walk of `rejectNonFiniteNumbers`. Strings are skipped with Buffer.indexOf (native), so the
 * cost is per structural byte. Malformed JSON is left to JSON.parse: the scan only counts.
 * UTF-8 multibyte sequences never contain ASCII bytes, so scanning bytes is exact.
 */
export function scanJson(buf: Buffer): { mayOverflowNumbers: boolean } {
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
  return { mayOverflowNumbers };
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

/**
 * JSON.parse reads a number beyond the double range (1e400, 400 digits) as ±Infinity, which
 * JSON.stringify then writes as null: the value would silently change (free-form event
 * properties) or fail a gRPC serialization. Such a body is refused whole, like malformed JSON,
 * naming the first such member. Iterative; the depth is already bounded by scanJson.
 */
export function rejectNonFiniteNumbers(value: unknown): void {
  const stack: Array<[unknown, string]> = [[value, 'body']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        throw new ApiError(400, 'validation_failed', `${path} is a number out of range (beyond ±1.8e308).`, [{ path, problem: 'is a number out of range (beyond ±1.8e308)' }]);
      }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], `${path}.${entries[i][0]}`]);
    }
  }
}
