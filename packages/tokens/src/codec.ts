// The binary body of a token: what is signed. Kept apart from token.ts so the MAC logic stays short.
//
//   byte 0   format version (1)
//   byte 1   flags: bit 0 = an expiry follows; bit 1+i = optional field i of the purpose is present
//   [expiry] unsigned LEB128 varint, seconds since the Unix epoch
//   fields   in the purpose's schema order:
//              id   -> 0x00 + 16 bytes (a lowercase UUID, the platform's id format) or
//                      n (1..MAX_ID_BYTES) + n UTF-8 bytes (any other short id, kept verbatim)
//              uint -> unsigned LEB128 varint
//
// The purpose itself is not in the body: verification is told which purpose it expects and the purpose
// is part of the MAC input, so a token of one purpose can never verify as another.

export const FORMAT_VERSION = 1;
/** Longest non-UUID id accepted (bytes of UTF-8); keeps every token well under MAX_TOKEN_LENGTH. */
export const MAX_ID_BYTES = 40;

export type FieldKind = 'id' | 'uint';
export interface FieldSpec {
  readonly name: string;
  readonly kind: FieldKind;
  readonly optional?: boolean;
  /** Largest value of a uint field. */
  readonly max?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export type Fields = Record<string, string | number>;

/** Encodes the fields; throws a TypeError on a value the schema refuses (a programming error of the caller). */
export function encodeBody(schema: readonly FieldSpec[], fields: Fields, expiresAtSeconds: number | undefined): Buffer {
  const out: number[] = [FORMAT_VERSION, 0];
  if (expiresAtSeconds !== undefined) {
    out[1] |= 1;
    pushVarint(out, expiresAtSeconds);
  }
  let optionalIndex = 0;
  for (const spec of schema) {
    const value = fields[spec.name];
    if (spec.optional) {
      if (optionalIndex > 6) throw new TypeError('too many optional fields');
      if (value !== undefined) out[1] |= 1 << (1 + optionalIndex);
      optionalIndex++;
      if (value === undefined) continue;
    } else if (value === undefined) {
      throw new TypeError(`token field ${spec.name} is required`);
    }
    if (spec.kind === 'id') pushId(out, spec.name, value);
    else {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > (spec.max ?? Number.MAX_SAFE_INTEGER)) {
        throw new TypeError(`token field ${spec.name} must be an integer from 0 to ${spec.max ?? Number.MAX_SAFE_INTEGER}`);
      }
      pushVarint(out, value);
    }
  }
  return Buffer.from(out);
}

/** Decodes a body; null on anything that is not exactly what encodeBody writes for this schema. */
export function decodeBody(schema: readonly FieldSpec[], body: Buffer): { fields: Fields; expiresAtSeconds?: number } | null {
  const reader = { pos: 2 };
  if (body.length < 2 || body[0] !== FORMAT_VERSION) return null;
  const flags = body[1];
  const optionalCount = schema.filter((s) => s.optional).length;
  if (flags >> (1 + optionalCount) !== 0) return null; // a presence bit for a field the purpose does not have
  let expiresAtSeconds: number | undefined;
  if (flags & 1) {
    const v = readVarint(body, reader);
    if (v === null) return null;
    expiresAtSeconds = v;
  }
  const fields: Fields = {};
  let optionalIndex = 0;
  for (const spec of schema) {
    if (spec.optional && !(flags & (1 << (1 + optionalIndex++)))) continue;
    if (spec.kind === 'id') {
      const id = readId(body, reader);
      if (id === null) return null;
      fields[spec.name] = id;
    } else {
      const v = readVarint(body, reader);
      if (v === null || v > (spec.max ?? Number.MAX_SAFE_INTEGER)) return null;
      fields[spec.name] = v;
    }
  }
  if (reader.pos !== body.length) return null; // trailing bytes
  return expiresAtSeconds === undefined ? { fields } : { fields, expiresAtSeconds };
}

function pushId(out: number[], name: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`token field ${name} must be a non-empty string`);
  if (UUID.test(value)) {
    out.push(0, ...Buffer.from(value.replace(/-/g, ''), 'hex'));
    return;
  }
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > MAX_ID_BYTES) throw new TypeError(`token field ${name} is longer than ${MAX_ID_BYTES} bytes`);
  out.push(bytes.length, ...bytes);
}

function readId(body: Buffer, reader: { pos: number }): string | null {
  if (reader.pos >= body.length) return null;
  const tag = body[reader.pos++];
  if (tag === 0) {
    if (reader.pos + 16 > body.length) return null;
    const hex = body.subarray(reader.pos, reader.pos + 16).toString('hex');
    reader.pos += 16;
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (tag > MAX_ID_BYTES || reader.pos + tag > body.length) return null;
  const bytes = body.subarray(reader.pos, reader.pos + tag);
  reader.pos += tag;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return null;
  }
  // A UUID is always written in its 16-byte form; the text form of one would be a second encoding.
  return UUID.test(text) ? null : text;
}

function pushVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

/** Canonical LEB128 only (no redundant trailing zero groups), at most a safe integer. */
function readVarint(body: Buffer, reader: { pos: number }): number | null {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    if (reader.pos >= body.length) return null;
    const byte = body[reader.pos++];
    value += (byte & 0x7f) * scale;
    if (!(byte & 0x80)) {
      if (i > 0 && byte === 0) return null;
      return Number.isSafeInteger(value) ? value : null;
    }
    scale *= 0x80;
  }
  return null;
}
