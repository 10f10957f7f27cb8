import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKeyring } from './derive';
import type { Secret } from './token';

// Secrets a service keeps at rest but must read back in clear (a DKIM private key it signs with):
// AES-256-GCM under a key derived (HKDF, derive.ts) from an operator master secret for one named use,
// so the master never touches the data and one use's key opens nothing of another's. The caller's
// `context` (e.g. "<accountId>:<domain>") is bound in as associated data: a sealed value copied onto
// another record does not open there.
//
// Format: `s1.<iv>.<ciphertext>.<tag>` (base64url parts, 12-byte iv, 16-byte tag). A keyring is
// `[current, ...previous]`: values are sealed with the first key and opened with any.

export interface Sealer {
  seal(plaintext: string, context: string): string;
  /** The plaintext; throws when no key of the keyring opens the value for this context (tampered, foreign or unknown key). */
  open(sealed: string, context: string): string;
}

const VERSION = 's1';

export function sealer(masterSecrets: Secret | readonly Secret[], use: string): Sealer {
  const keys = deriveKeyring(masterSecrets, `seal:${use}`);
  if (keys.length === 0) throw new TypeError('a sealer needs at least one master secret');
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys[0], iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, iv, ct, tag, ...rest] = sealed.split('.');
      if (version !== VERSION || !iv || ct === undefined || !tag || rest.length) throw new Error('not a sealed value');
      for (const key of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
          decipher.setAAD(Buffer.from(context, 'utf8'));
          decipher.setAuthTag(Buffer.from(tag, 'base64url'));
          return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
        } catch {
          // the next key of the ring, if any
        }
      }
      throw new Error('the sealed value does not open with this key and context');
    },
  };
}
