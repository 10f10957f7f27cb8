import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { decodeBody, encodeBody, type FieldSpec, type Fields } from './codec';

// Opaque tokens for the public web surface (the API contract "Public web surface"): base64url (no padding) of
// body || tag, tag = the first 16 bytes of HMAC-SHA256(key, "mailer.token.v1.<purpose>\0" || body).
// The body (codec.ts) carries the account id and the purpose's ids, never a URL or an address, so a
// token can only point at something the service stored (a click token names a link index of a stored
// message, not where to redirect).

/** Bytes of HMAC-SHA256 kept: 128 bits, plenty against forgery while keeping URLs short. */
export const TAG_BYTES = 16;
/** Longest token accepted; anything longer is refused before decoding or any MAC work. */
export const MAX_TOKEN_LENGTH = 256;
/** Shortest secret accepted (bytes): a weak operator secret would make every public link forgeable. */
export const MIN_SECRET_BYTES = 32;

/** The ids each purpose signs, besides `accountId` (always first, always required). */
export interface PayloadByPurpose {
  /** Open pixel /t/o/{token}. */
  open: { messageId: string };
  /** Click redirect /t/c/{token}: the n-th rewritten link of that message (0-based). */
  click: { messageId: string; linkIndex: number };
  /** /u/{token} preference page and RFC 8058 one-click: the reader, and the mail's topic when it had one. */
  unsubscribe: { subscriberId?: string; messageId?: string; topicId?: string };
  /** Double opt-in /public/confirm/{token}: the signup submission; always signed with an expiry. */
  confirm: { submissionId: string };
}
export type TokenPurpose = keyof PayloadByPurpose;
export const TOKEN_PURPOSES: readonly TokenPurpose[] = ['open', 'click', 'unsubscribe', 'confirm'];

export type TokenClaims<P extends TokenPurpose> = { purpose: P; accountId: string } & PayloadByPurpose[P];
/** What verification returns: the claims, and the expiry (epoch ms, whole seconds) when the token has one. */
export type VerifiedToken<P extends TokenPurpose> = TokenClaims<P> & { expiresAt?: number };

const ID = (name: string, optional = false): FieldSpec => ({ name, kind: 'id', optional });
const SCHEMAS: Record<TokenPurpose, { fields: readonly FieldSpec[]; expiry: 'required' | 'optional' }> = {
  open: { fields: [ID('accountId'), ID('messageId')], expiry: 'optional' },
  click: { fields: [ID('accountId'), ID('messageId'), { name: 'linkIndex', kind: 'uint', max: 0xffff }], expiry: 'optional' },
  unsubscribe: {
    fields: [ID('accountId'), ID('subscriberId', true), ID('messageId', true), ID('topicId', true)],
    expiry: 'optional',
  },
  confirm: { fields: [ID('accountId'), ID('submissionId')], expiry: 'required' },
};

/** One secret, or the keyring for verification: the current secret first, then previous ones. */
export type Secret = string | Buffer;
export type SecretOrKeyring = Secret | readonly Secret[];

export interface SignOptions {
  /** Instant after which the token no longer verifies (kept at whole seconds, rounded down). */
  expiresAt?: Date | number;
}
export interface VerifyOptions {
  /** Injected clock (epoch ms) for expiry checks; Date.now by default. */
  now?: () => number;
}

export type VerifyResult<P extends TokenPurpose> =
  | { ok: true; claims: VerifiedToken<P> }
  /** `expired`: authentic but past its expiry (the claims are given so a page can say what expired). */
  | { ok: false; reason: 'expired'; claims: VerifiedToken<P> }
  /** `invalid`: forged, edited, truncated, too long, another purpose, or signed with an unknown secret. */
  | { ok: false; reason: 'invalid' };

/**
 * Signs claims for one purpose with the current secret (the first of a keyring). Throws a TypeError on
 * claims the purpose does not have, a missing required id, or a missing expiry for `confirm`.
 */
export function signToken<P extends TokenPurpose>(secret: SecretOrKeyring, claims: TokenClaims<P>, options: SignOptions = {}): string {
  const schema = schemaOf(claims.purpose);
  if (!schema) throw new TypeError(`unknown token purpose ${String(claims.purpose)}`);
  const fields: Fields = {};
  for (const [name, value] of Object.entries(claims)) {
    if (name === 'purpose' || value === undefined) continue;
    if (!schema.fields.some((f) => f.name === name)) throw new TypeError(`a ${claims.purpose} token has no field ${name}`);
    fields[name] = value as string | number;
  }
  if (claims.purpose === 'unsubscribe' && fields.subscriberId === undefined && fields.messageId === undefined) {
    throw new TypeError('an unsubscribe token needs a subscriberId or a messageId');
  }
  let expiresAtSeconds: number | undefined;
  if (options.expiresAt !== undefined) {
    const ms = options.expiresAt instanceof Date ? options.expiresAt.getTime() : options.expiresAt;
    if (!Number.isFinite(ms) || ms < 0) throw new TypeError('expiresAt must be a valid instant');
    expiresAtSeconds = Math.floor(ms / 1000);
  } else if (schema.expiry === 'required') {
    throw new TypeError(`a ${claims.purpose} token needs expiresAt`);
  }
  const body = encodeBody(schema.fields, fields, expiresAtSeconds);
  const key = keysOf(secret)[0];
  return Buffer.concat([body, tag(key, claims.purpose, body)]).toString('base64url');
}

/** The claims of a valid, unexpired token of this purpose, else null (see verifyTokenResult for why). */
export function verifyToken<P extends TokenPurpose>(secret: SecretOrKeyring, token: string, purpose: P, options: VerifyOptions = {}): VerifiedToken<P> | null {
  const result = verifyTokenResult(secret, token, purpose, options);
  return result.ok ? result.claims : null;
}

/** Like verifyToken, but tells an expired (authentic) token apart from an invalid one. */
export function verifyTokenResult<P extends TokenPurpose>(secret: SecretOrKeyring, token: string, purpose: P, options: VerifyOptions = {}): VerifyResult<P> {
  const invalid = { ok: false, reason: 'invalid' } as const;
  const schema = schemaOf(purpose);
  const keys = keysOf(secret); // validates the keyring even for garbage tokens: a misconfiguration fails loudly
  if (!schema) throw new TypeError(`unknown token purpose ${String(purpose)}`);
  // Cheap refusals first: length, alphabet, canonical base64url (Buffer.from ignores stray characters
  // and unused trailing bits, so an edited last character could otherwise decode to the same bytes).
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return invalid;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length <= TAG_BYTES + 2 || bytes.toString('base64url') !== token) return invalid;
  const body = bytes.subarray(0, bytes.length - TAG_BYTES);
  const given = bytes.subarray(bytes.length - TAG_BYTES);
  let authentic = false;
  for (const key of keys) {
    // No early exit: the time taken does not tell which secret of the keyring matched.
    if (timingSafeEqual(tag(key, purpose, body), given)) authentic = true;
  }
  if (!authentic) return invalid;
  const decoded = decodeBody(schema.fields, body);
  if (!decoded) return invalid;
  const claims = { purpose, ...decoded.fields } as VerifiedToken<P>;
  if (decoded.expiresAtSeconds !== undefined) {
    claims.expiresAt = decoded.expiresAtSeconds * 1000;
    if ((options.now ?? Date.now)() >= claims.expiresAt) return { ok: false, reason: 'expired', claims };
  } else if (schema.expiry === 'required') {
    return invalid;
  }
  return { ok: true, claims };
}

function schemaOf(purpose: unknown) {
  return typeof purpose === 'string' && Object.prototype.hasOwnProperty.call(SCHEMAS, purpose) ? SCHEMAS[purpose as TokenPurpose] : undefined;
}

/**
 * The HMAC key object of a secret, made once per secret: createHmac with a Buffer imports the key
 * anew on every call, which costs several times the MAC itself (every mail signs several links).
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();
export function hmacKey(secret: Buffer): KeyObject {
  let key = keyObjects.get(secret);
  if (!key) keyObjects.set(secret, (key = createSecretKey(secret)));
  return key;
}

function tag(key: Buffer, purpose: string, body: Buffer): Buffer {
  return createHmac('sha256', hmacKey(key)).update(`mailer.token.v1.${purpose}\0`).update(body).digest().subarray(0, TAG_BYTES);
}

function keysOf(secret: SecretOrKeyring): Buffer[] {
  const list = typeof secret === 'string' || Buffer.isBuffer(secret) ? [secret] : [...secret];
  if (list.length === 0) throw new TypeError('no token secret configured');
  return list.map((s) => {
    const key = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    if (!Buffer.isBuffer(key) || key.length < MIN_SECRET_BYTES) throw new TypeError(`a token secret must have at least ${MIN_SECRET_BYTES} bytes`);
    return key;
  });
}
