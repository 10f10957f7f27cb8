import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { OutboundErrorCode } from './errors';
import { cachedPolicy, type OutboundSettings } from './policy';

export type CheckUrlResult =
  | { ok: true; url: URL }
  | { ok: false; code: Extract<OutboundErrorCode, 'url_not_allowed' | 'address_not_allowed'>; reason: string };

/** The host of a URL without IPv6 brackets ('[::1]' -> '::1'). */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

// "localhost" and *.localhost always mean loopback (RFC 6761); refusing them here gives the customer
// the answer at save time instead of at the first delivery.
const isLocalhostName = (host: string) => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

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
  const policy = cachedPolicy(settings);
  // WHATWG URL parsing has already turned 0x7f.1, 2130706433 and the like into dotted IPv4.
  const literals = isIP(host) ? [host] : isLocalhostName(host) ? ['127.0.0.1', '::1'] : [];
  if (literals.length > 0 && !literals.some((a) => policy.allows(a))) {
    return { ok: false, code: 'address_not_allowed', reason: 'the URL points to a loopback, private, link-local or other non-public address' };
  }
  return { ok: true, url };
};

/** A resolver with the shape of dns.lookup called with `all: true`; tests inject a rebinding one. */
export type Lookup = (
  hostname: string,
  options: { all: true; family?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const systemLookup: Lookup = (host, options, callback) => dnsLookup(host, options, callback);

export type CheckTargetResult =
  | { ok: true; url: URL }
  | { ok: false; code: Extract<OutboundErrorCode, 'url_not_allowed' | 'address_not_allowed' | 'dns_failed'>; reason: string };

/**
 * checkUrl plus what the name resolves to now: refused when no resolved address is allowed. For save
 * time only (a friendlier early answer): DNS can change after this, so every request checks again on the
 * address it actually connects to. A name that does not resolve is `dns_failed`; the caller decides
 * whether that blocks saving.
 */
export const checkTarget = async (
  input: string | URL,
  settings: OutboundSettings,
  opts: { lookup?: Lookup } = {},
): Promise<CheckTargetResult> => {
  const checked = checkUrl(input, settings);
  if (!checked.ok) return checked;
  const host = bareHost(checked.url);
  if (isIP(host)) return checked;
  const resolve = opts.lookup ?? systemLookup;
  const addresses = await new Promise<LookupAddress[] | null>((done) =>
    resolve(host, { all: true }, (err, list) => done(err ? null : Array.isArray(list) ? list : [])),
  );
  if (addresses === null || addresses.length === 0) return { ok: false, code: 'dns_failed', reason: 'the host name could not be resolved' };
  const policy = cachedPolicy(settings);
  if (!addresses.some((a) => policy.allows(a.address))) {
    return { ok: false, code: 'address_not_allowed', reason: 'the URL resolves to a loopback, private, link-local or other non-public address' };
  }
  return checked;
};
