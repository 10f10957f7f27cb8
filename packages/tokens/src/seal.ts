import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets sealed at rest: values the application must read back in clear (an API key shown again, a
 * webhook signing secret, an answer replayed for an Idempotency-Key) are stored encrypted with
 * AES-256-GCM. The `context` (the owning account and record) is bound in as associated data, so a
 * sealed value copied onto another record does not open there.
 *
 * A keyring is `[current, ...previous]` (a master key and its `*_PREVIOUS` values): the current key
 * seals, every key opens, and `open` says when a value was sealed under a previous key, so its
 * owner re-seals it under the current one. Once nothing sealed under a previous key is left, that
 * key can be dropped.
 *
 * Format: `v1.<iv>.<ciphertext>.<tag>` (base64url; a random 96-bit IV per value).
 */
export interface SealingKeyring {
  seal(plain: string, context: string): string;
  /** The clear value; `stale` when a previous key sealed it. Throws when no key opens it (or the context differs). */
  open(sealed: string, context: string): { value: string; stale: boolean };
}

/** Validates a master key: base64 of exactly 32 bytes (`openssl rand -base64 32`). */
export function parseMasterKey(base64: string): Buffer {
  const trimmed = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) throw new Error('must be base64');
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new Error(`must be base64 of 32 bytes (got ${bytes.length})`);
  return bytes;
}

/** The 32-byte key of one use (`info`) derived from a master key (HKDF-SHA256, no salt). */
export const deriveKey = (master: Buffer, info: string): Buffer => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));

export class SealedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedValueError';
  }
}

/** Whether a stored value has the sealed format (a value stored in clear before sealing existed has not). */
export const isSealed = (value: string): boolean => value.startsWith('v1.') && value.split('.').length === 4;

/** The keyring of one use (`info`) from master keys listed current first, then previous. */
export const derivedKeyring = (masters: readonly Buffer[], info: string): SealingKeyring => sealingKeyring(masters.map((m) => deriveKey(m, info)));

/** A keyring of 32-byte keys, current first. */
export function sealingKeyring(keys: readonly Buffer[]): SealingKeyring {
  if (keys.length === 0 || keys.some((k) => k.length !== 32)) throw new TypeError('a sealing keyring needs 32-byte keys, the current one first');
  const openWith = (key: Buffer, iv: Buffer, ct: Buffer, tag: Buffer, context: string): string | null => {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
    } catch {
      return null; // another key's value, or tampered with
    }
  };
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys[0], iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, iv, ct, tag, extra] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || ct === undefined || tag === undefined || extra !== undefined) throw new SealedValueError('unknown sealed value format');
      const parts = [Buffer.from(iv, 'base64url'), Buffer.from(ct, 'base64url'), Buffer.from(tag, 'base64url')] as const;
      for (const [i, key] of keys.entries()) {
        const value = openWith(key, ...parts, context);
        if (value !== null) return { value, stale: i > 0 };
      }
      throw new SealedValueError('no key of the keyring opens this sealed value (a key that is no longer configured, another record, or tampered with)');
    },
  };
}
