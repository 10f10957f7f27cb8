import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * API key material. A key is `mk_` + 40 base62 characters (238 bits of randomness; the prefix
 * makes leaked keys easy to recognise for secret scanners). It is stored twice, never in clear:
 * - sealed with AES-256-GCM, so the application can show the full value again (the spec: "can be
 *   copied at any time"); the account id is bound in as associated data;
 * - as an HMAC-SHA256 lookup hash, the key of the index that finds the account from a request.
 * Both keys are derived from API_KEY_MASTER_KEY with HKDF, one per purpose.
 */

export const API_KEY_PREFIX = 'mk_';
const BODY_LENGTH = 40;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const API_KEY_SHAPE = /^mk_[A-Za-z0-9]{40}$/;

export function generateApiKey(): string {
  let body = '';
  // randomInt is uniform (rejection sampling), unlike bytes % 62.
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return API_KEY_PREFIX + body;
}

/**
 * Cheap syntactic check before any lookup. The masked display form (`abcde*****`), blanks and
 * anything else that cannot be a key fail here.
 */
export function looksLikeApiKey(value: string): boolean {
  return API_KEY_SHAPE.test(value);
}

/**
 * Anything shaped like a key (the prefix and 40 or more base62 characters, some perhaps
 * percent-encoded) in a text that is logged: paths and URLs, where a client may put a key by
 * mistake (`GET /subscribers/mk_...`). Over-redacting a look-alike costs nothing.
 */
const KEY_IN_TEXT = /mk_(?:[A-Za-z0-9]|%[0-9A-Fa-f]{2}){40,}/g;
export const REDACTED_API_KEY = 'mk_[redacted]';

export function redactApiKeys(text: string): string {
  // indexOf first: most paths hold no prefix at all and then cost no regex run.
  return text.includes(API_KEY_PREFIX) ? text.replace(KEY_IN_TEXT, REDACTED_API_KEY) : text;
}

/** Display form: first five characters and five asterisks (the asterisks do not reflect length). */
export function maskApiKey(key: string): string {
  return `${key.slice(0, 5)}*****`;
}

export interface KeyCrypto {
  /** Hex HMAC-SHA256 of the key: the index key and the value compared on every request. */
  lookupHash(apiKey: string): string;
  /** Constant-time comparison of two lookup hashes. */
  sameHash(a: string, b: string): boolean;
  seal(apiKey: string, accountId: string): string;
  open(sealed: string, accountId: string): string;
}

/** Validates API_KEY_MASTER_KEY: base64 of exactly 32 bytes. */
export function parseMasterKey(base64: string): Buffer {
  const trimmed = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) throw new Error('must be base64');
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new Error(`must be base64 of 32 bytes (got ${bytes.length})`);
  return bytes;
}

const derive = (master: Buffer, info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));

export function createKeyCrypto(masterKeyBase64: string): KeyCrypto {
  const master = parseMasterKey(masterKeyBase64);
  const encKey = derive(master, 'mailer gateway api-key encryption v1');
  const macKey = derive(master, 'mailer gateway api-key lookup v1');

  return {
    lookupHash: (apiKey) => createHmac('sha256', macKey).update(apiKey, 'utf8').digest('hex'),
    sameHash(a, b) {
      const x = Buffer.from(a, 'hex');
      const y = Buffer.from(b, 'hex');
      return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
    },
    seal(apiKey, accountId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encKey, iv);
      cipher.setAAD(Buffer.from(accountId, 'utf8'));
      const ct = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, accountId) {
      const [version, iv, ct, tag] = sealed.split('.');
      if (version !== 'v1' || !iv || !ct || !tag) throw new Error('unknown sealed key format');
      const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(accountId, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
