// Rules of the suppression list's input (API.md "Delivery facts ... suppressions"), pure.
import isEmail from 'validator/lib/isEmail';
import { invalid } from '@mailer/kit';

/** Longest address SMTP can carry (RFC 5321: 254 in a path). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_PAGE_SIZE = 1000;

/**
 * The canonical form (trimmed, lower-cased as a whole: API.md section 2), the form every message
 * and suppression stores, or `400 invalid_email`.
 */
export function suppressionAddress(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH || !isEmail(email, { allow_display_name: false, allow_ip_domain: false })) {
    throw invalid('invalid_email', `"${raw.slice(0, 80)}" is not a valid email address`);
  }
  return email;
}

/** Pages are 1-based; the gateway validates too, but a service never trusts its callers. */
export function pageOf(pageNumber: number, pageSize: number): { pageNumber: number; pageSize: number } {
  const number = pageNumber || 1;
  const size = pageSize || 50;
  if (number < 1 || size < 1 || size > MAX_PAGE_SIZE || !Number.isSafeInteger((number - 1) * size)) {
    throw invalid('validation_failed', `pageNumber must be >= 1 and pageSize 1..${MAX_PAGE_SIZE}`);
  }
  return { pageNumber: number, pageSize: size };
}
