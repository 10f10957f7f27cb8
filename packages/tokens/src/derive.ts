import { hkdfSync } from 'node:crypto';
import { MIN_SECRET_BYTES, type Secret, type TokenPurpose } from './token';

// the settings (docs/configuration.md): TRACKING_SECRET "or derived from one master secret". HKDF-SHA256 (RFC 5869) turns
// one operator master secret into an independent 32-byte key per purpose, so a key leaked from one use
// (say, a confirmation link signer) neither reveals the master nor signs tokens of another purpose.
const SALT = 'mailer.tokens.v1';

/** The key for one purpose (or any other named use, e.g. "bounce") derived from the master secret. */
export function deriveSecret(masterSecret: Secret, purpose: TokenPurpose | (string & {})): Buffer {
  const master = typeof masterSecret === 'string' ? Buffer.from(masterSecret, 'utf8') : masterSecret;
  if (!Buffer.isBuffer(master) || master.length < MIN_SECRET_BYTES) {
    throw new TypeError(`a master secret must have at least ${MIN_SECRET_BYTES} bytes`);
  }
  if (typeof purpose !== 'string' || purpose.length === 0) throw new TypeError('a purpose is required');
  return Buffer.from(hkdfSync('sha256', master, SALT, `purpose:${purpose}`, 32));
}

/** A keyring for one purpose from master secrets listed current first, then previous (for rotation). */
export function deriveKeyring(masterSecrets: Secret | readonly Secret[], purpose: TokenPurpose | (string & {})): Buffer[] {
  const list = typeof masterSecrets === 'string' || Buffer.isBuffer(masterSecrets) ? [masterSecrets] : [...masterSecrets];
  return list.map((s) => deriveSecret(s, purpose));
}
