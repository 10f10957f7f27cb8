// VERP return paths that only this system can issue.
//
// Address: b-<messageId>-<mac>@<bounceDomain>, mac = first 20 hex chars (80 bits) of
// HMAC-SHA256(secret, "verp:v1:" + messageId + "@" + bounceDomain).
//
// Decision: the account id is NOT in the address. The message id is unique across accounts
// and the message store maps it to its account, so carrying the account would only make the
// address longer (a 24-char ObjectId + 20-char MAC keeps the local part at 47 of 64 chars)
// and leak which account sent the mail to every relay. The MAC binds the message id and the
// domain, so nobody can point a bounce at a message they were not sent.
//
// Relays may change the case of the local part, so parsing lower-cases first; ids and MACs
// are issued in lower case only ([a-z0-9-]).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { hmacKey } from '@mailer/tokens';

export interface VerpTarget {
  messageId: string;
}

const MAC_HEX_CHARS = 20;
const ID_PATTERN = /^[a-z0-9]{1,40}$/;
const LOCAL_PATTERN = /^b-([a-z0-9]{1,40})-([0-9a-f]{20})$/;

function mac(messageId: string, secret: string | Buffer, bounceDomain: string): string {
  return createHmac('sha256', typeof secret === 'string' ? secret : hmacKey(secret))
    .update(`verp:v1:${messageId}@${bounceDomain.toLowerCase()}`)
    .digest('hex')
    .slice(0, MAC_HEX_CHARS);
}

/** The return path for one message. Throws on ids it cannot encode (a programming error). */
export function verpAddress(target: VerpTarget, secret: string | Buffer, bounceDomain: string): string {
  if (!ID_PATTERN.test(target.messageId)) {
    throw new Error('verpAddress: message id must be 1-40 chars of [a-z0-9]');
  }
  if (!secret || secret.length === 0) throw new Error('verpAddress: empty secret');
  const local = `b-${target.messageId}-${mac(target.messageId, secret, bounceDomain)}`;
  return `${local}@${bounceDomain.toLowerCase()}`;
}

/** The message a return path was issued for, or null for anything this system did not issue. */
export function parseVerpAddress(
  address: string,
  secret: string | Buffer,
  bounceDomain: string,
): VerpTarget | null {
  if (typeof address !== 'string' || address.length > 320) return null;
  if (!secret || secret.length === 0) return null;
  // Accept "<addr>" as given in SMTP envelopes.
  const bare = address.trim().replace(/^<(.*)>$/, '$1').toLowerCase();
  const at = bare.lastIndexOf('@');
  if (at <= 0) return null;
  const local = bare.slice(0, at);
  const domain = bare.slice(at + 1);
  if (domain !== bounceDomain.toLowerCase()) return null;
  const m = LOCAL_PATTERN.exec(local);
  if (!m) return null;
  const [, messageId, givenMac] = m;
  const expected = Buffer.from(mac(messageId, secret, bounceDomain), 'utf8');
  const given = Buffer.from(givenMac, 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return { messageId };
}
