import { createHmac, createSecretKey, randomInt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { deriveKey, keySealer, parseMasterKey } from '@mailer/tokens';

/**
 * API key material. A key is `mk_` + 40 base62 characters (238 bits of randomness; the prefix
 * makes leaked keys easy to recognise for secret scanners). It is stored twice, never in clear:
 * - sealed with AES-256-GCM, so the application can show the full value again (the spec: "can be
 *   copied at any time"); the account id is bound in as associated data;
 * - as an HMAC-SHA256 lookup hash, the key of the index that finds the account from a request.
 * Both keys are derived from API_KEY_MASTER_KEY with HKDF, one per purpose (@mailer/tokens seals).
 * A request is accepted only when the sealed copy, opened with the account id, is the presented key.
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
  /** Hex HMAC-SHA256 of the key under the current master key: the index key and the value compared on every request. */
  lookupHash(apiKey: string): string;
  /** Its hashes under the previous master keys, newest first: where a key not re-sealed since a rotation is indexed. */
  previousLookupHashes(apiKey: string): string[];
  /** Constant-time comparison of two lookup hashes. */
  sameHash(a: string, b: string): boolean;
  seal(apiKey: string, accountId: string): string;
  /** The key of a sealed copy (`stale`: sealed under a previous master key). Throws when it does not open with this account id. */
  open(sealed: string, accountId: string): { value: string; stale: boolean };
  /**
   * Whether `presented` is the key sealed in `sealed` for `accountId` (constant time). False when the
   * copy does not open with that account id: a lookup hash grafted onto another account in the KV
   * comes with a copy sealed for its own account, or none that opens.
   */
  holds(sealed: string, accountId: string, presented: string): boolean;
}

/**
 * The key material of API_KEY_MASTER_KEY and its API_KEY_MASTER_KEY_PREVIOUS values (base64
 * strings or their bytes). The current master key seals and indexes; previous ones still open and
 * find what they sealed until it is re-sealed (AccountStore).
 */
export function createKeyCrypto(masterKey: Buffer | string, previous: readonly (Buffer | string)[] = []): KeyCrypto {
  const masters = [masterKey, ...previous].map((k) => (typeof k === 'string' ? parseMasterKey(k) : k));
  // The `v1` format and these derivations are those of keys stored before keyrings existed.
  const sealing = keySealer(masters.map((m) => deriveKey(m, 'mailer gateway api-key encryption v1')), 'v1');
  // KeyObjects made once: createHmac given a Buffer wraps it in a new one on every call, which cost
  // several times the HMAC itself (one per authenticated request).
  const macKeys = masters.map((m) => createSecretKey(deriveKey(m, 'mailer gateway api-key lookup v1')));
  const hash = (macKey: KeyObject, apiKey: string) => createHmac('sha256', macKey).update(apiKey, 'utf8').digest('hex');

  return {
    lookupHash: (apiKey) => hash(macKeys[0], apiKey),
    previousLookupHashes: (apiKey) => macKeys.slice(1).map((k) => hash(k, apiKey)),
    sameHash(a, b) {
      const x = Buffer.from(a, 'hex');
      const y = Buffer.from(b, 'hex');
      return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
    },
    seal: (apiKey, accountId) => sealing.seal(apiKey, accountId),
    open: (sealed, accountId) => sealing.unseal(sealed, accountId),
    holds(sealed, accountId, presented) {
      let value: string;
      try {
        value = sealing.open(sealed, accountId);
      } catch {
        return false;
      }
      const a = Buffer.from(value, 'utf8');
      const b = Buffer.from(presented, 'utf8');
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}
