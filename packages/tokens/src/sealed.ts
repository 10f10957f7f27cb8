import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { deriveKeyring } from './derive';
import type { Secret } from './token';

// Secrets kept at rest but read back in clear (a webhook signing secret, a DKIM private key, an API
// key shown again, an answer replayed for an Idempotency-Key): AES-256-GCM under a key derived from
// an operator master key for one named use, so the master never touches the data and one use's key
// opens nothing of another's. The caller's `context` (the owning account and record) is bound in as
// associated data: a sealed value copied onto another record does not open there.
//
// A keyring is `[current, ...previous]` (a master key and its `*_PREVIOUS` values): the current key
// seals, every key opens, and `unseal` says when a previous key sealed a value, so its owner seals it
// again under the current one. Once nothing sealed under a previous key is left, that key can go.
//
// Format: `<tag>.<iv>.<ciphertext>.<tag>` (base64url parts, 12-byte iv, 16-byte tag); the leading tag
// is `s1` for values sealed by `sealer`, `v1` for the gateway's API keys (the format they had before).

export interface Sealer {
  seal(plaintext: string, context: string): string;
  /** The plaintext; throws when no key of the keyring opens the value for this context (tampered, foreign or unknown key). */
  open(sealed: string, context: string): string;
  /** As `open`, and whether a previous key of the keyring sealed it (`stale`: seal it again). */
  unseal(sealed: string, context: string): { value: string; stale: boolean };
  /** Whether a stored value has this sealer's format (a value stored in clear before sealing existed has not). */
  isSealed(value: string): boolean;
}

export class SealedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedValueError';
  }
}

/** The sealer of one named use, from master secrets listed current first (SECRET_SEALING_KEY and its previous values). */
export function sealer(masterSecrets: Secret | readonly Secret[], use: string): Sealer {
  const keys = deriveKeyring(masterSecrets, `seal:${use}`);
  if (keys.length === 0) throw new TypeError('a sealer needs at least one master secret');
  return keySealer(keys, 's1');
}

/** Validates a master key: base64 of exactly 32 bytes (`openssl rand -base64 32`). */
export function parseMasterKey(base64: string): Buffer {
  const trimmed = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) throw new Error('must be base64');
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new Error(`must be base64 of 32 bytes (got ${bytes.length})`);
  return bytes;
}

/** HKDF-SHA256 of a master key without salt: the gateway's API key keys (kept so stored keys still open). */
export const deriveKey = (master: Buffer, info: string): Buffer => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));

/** A sealer over 32-byte keys (current first) writing the format tag `tag`. */
export function keySealer(keys: readonly Buffer[], tag: string): Sealer {
  if (keys.length === 0 || keys.some((k) => k.length !== 32)) throw new TypeError('a sealer needs at least one 32-byte key, the current one first');
  const parse = (sealed: string) => {
    const [version, iv, ct, authTag, ...rest] = sealed.split('.');
    if (version !== tag || !iv || ct === undefined || !authTag || rest.length) throw new SealedValueError('not a sealed value');
    return { iv: Buffer.from(iv, 'base64url'), ct: Buffer.from(ct, 'base64url'), authTag: Buffer.from(authTag, 'base64url') };
  };
  const unseal = (sealed: string, context: string) => {
    const { iv, ct, authTag } = parse(sealed);
    for (const [i, key] of keys.entries()) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(authTag);
        return { value: Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8'), stale: i > 0 };
      } catch {
        // the next key of the ring, if any
      }
    }
    throw new SealedValueError('the sealed value does not open with this key and context');
  };
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys[0], iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [tag, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open: (sealed, context) => unseal(sealed, context).value,
    unseal,
    isSealed(value) {
      try {
        parse(value);
        return true;
      } catch {
        return false;
      }
    },
  };
}
