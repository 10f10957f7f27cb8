import { isIP } from 'node:net';
import type { OutboundErrorCode } from './errors';
import { addressPolicy, type OutboundSettings } from './policy';

export type CheckUrlResult =
  | { ok: true; url: URL }
  | { ok: false; code: Extract<OutboundErrorCode, 'url_not_allowed' | 'address_not_allowed'>; reason: string };

/** The host of a URL without IPv6 brackets ('[::1]' -> '::1'). */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

// "localhost" and *.localhost always mean loopback (RFC 6761); refusing them here gives the customer
// the answer at save time instead of at the first delivery.
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * What can be decided about a customer-given URL without DNS: syntax, scheme, credentials and a
 * literal address. Used when a URL is saved (the caller maps a refusal to its own errorId) and again
 * before every request; names are checked on the address actually connected to.
 */
export const checkUrl = (input: string | URL, settings: OutboundSettings): CheckUrlResult => {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return { ok: false, code: 'url_not_allowed', reason: 'not an absolute URL' };
  }
  const schemes = settings.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return { ok: false, code: 'url_not_allowed', reason: settings.allowHttp ? 'the URL must use https or http' : 'the URL must use https' };
  }
  // Credentials in a URL would be shown back wherever the URL is (API answers, logs).
  if (url.username !== '' || url.password !== '') {
    return { ok: false, code: 'url_not_allowed', reason: 'the URL must not contain credentials' };
  }
  const host = bareHost(url);
  if (host === '') return { ok: false, code: 'url_not_allowed', reason: 'the URL has no host' };
  const policy = addressPolicy(settings);
  // WHATWG URL parsing has already turned 0x7f.1, 2130706433 and the like into dotted IPv4.
  const literals = isIP(host) ? [host] : isLocalhostName(host.toLowerCase()) ? ['127.0.0.1', '::1'] : [];
  if (literals.length > 0 && !literals.some((a) => policy.allows(a))) {
    return { ok: false, code: 'address_not_allowed', reason: 'the URL points to a loopback, private, link-local or other non-public address' };
  }
  return { ok: true, url };
};
