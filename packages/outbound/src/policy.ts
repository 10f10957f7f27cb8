import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

// Which addresses an outbound call may reach: public unicast only, unless the operator allowed a range
// (OUTBOUND_ALLOWED_CIDRS; the local runner and tests allow loopback so receivers on 127.0.0.1 work).

export interface OutboundSettings {
  /** OUTBOUND_ALLOW_HTTP: plain http targets are accepted (production: false). */
  allowHttp: boolean;
  /** OUTBOUND_ALLOWED_CIDRS: ranges reachable even though they are not public unicast (production: none). */
  allowedCidrs: string[];
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

// Cloud metadata endpoints. 169.254.169.254 and fd00:ec2::254 are link-local / unique-local anyway; they
// are listed so the rule survives a refactor. 168.63.129.16 (Azure's platform endpoint) is public unicast
// and would pass otherwise.
const METADATA = ['169.254.169.254', 'fd00:ec2::254', '168.63.129.16'].map((a) => ipaddr.parse(a));

// IPv6 global unicast is 2000::/3; everything outside it (including the deprecated IPv4-compatible ::/96,
// discard, segment routing) is refused unless it embeds an IPv4 address handled below.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

const parseBool = (name: string, raw: string | undefined): boolean => {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0' || v === 'no') return false;
  if (v === 'true' || v === '1' || v === 'yes') return true;
  throw new Error(`${name} must be true or false, got "${raw}"`);
};

/** Parses one range: a CIDR, or a bare address meaning that single address. Throws on bad input. */
export const parseCidr = (text: string): Cidr => {
  const t = text.trim();
  if (t.includes('/')) return ipaddr.parseCIDR(t) as Cidr;
  const a = ipaddr.parse(t);
  return [a, a.kind() === 'ipv4' ? 32 : 128];
};

/**
 * The guard's settings from the environment (docs/configuration.md). Production defaults: no http, no
 * exceptions. Throws on a malformed value so a process refuses to start with a guard it did not mean.
 */
export const outboundSettings = (env: NodeJS.ProcessEnv = process.env): OutboundSettings => {
  const allowedCidrs = (env.OUTBOUND_ALLOWED_CIDRS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const c of allowedCidrs) {
    try {
      parseCidr(c);
    } catch {
      throw new Error(`OUTBOUND_ALLOWED_CIDRS: "${c}" is not an address range (e.g. 127.0.0.0/8,::1/128)`);
    }
  }
  return { allowHttp: parseBool('OUTBOUND_ALLOW_HTTP', env.OUTBOUND_ALLOW_HTTP), allowedCidrs };
};

const v4FromBytes = (b: number[]): ipaddr.IPv4 => new ipaddr.IPv4(b.map((x) => x & 0xff));

/**
 * The IPv4 addresses an IPv6 address stands for, where traffic to it really goes to IPv4: mapped
 * (::ffff:a.b.c.d, what a dual-stack socket reports), NAT64 (64:ff9b::/96), 6to4 (2002:AABB:CCDD::),
 * Teredo (server and de-obfuscated client). Empty for an ordinary IPv6 address.
 */
const embeddedV4 = (a: ipaddr.IPv6): ipaddr.IPv4[] => {
  const p = a.parts;
  const last = () => v4FromBytes([p[6] >> 8, p[6], p[7] >> 8, p[7]]);
  switch (a.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [last()];
    case 'rfc6052':
      // 64:ff9b::/96 embeds the address in the last 32 bits; the local-use 64:ff9b:1::/48 may embed it
      // elsewhere, so it is refused below (no embedded address, outside 2000::/3).
      return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? [last()] : [];
    case '6to4':
      return [v4FromBytes([p[1] >> 8, p[1], p[2] >> 8, p[2]])];
    case 'teredo':
      return [v4FromBytes([p[2] >> 8, p[2], p[3] >> 8, p[3]]), v4FromBytes([~p[6] >> 8, ~p[6], ~p[7] >> 8, ~p[7]])];
    default:
      return [];
  }
};

const inAny = (a: Address, cidrs: Cidr[]) => cidrs.some(([net, bits]) => a.kind() === net.kind() && a.match(net, bits));
const isMetadata = (a: Address) => METADATA.some((m) => m.kind() === a.kind() && m.toNormalizedString() === a.toNormalizedString());

const publicV4 = (a: ipaddr.IPv4) => a.range() === 'unicast' && !isMetadata(a);

export interface AddressPolicy {
  /** True when a connection to this literal address (v4 or v6, brackets tolerated) is allowed. */
  allows(address: string): boolean;
}

export const addressPolicy = (settings: OutboundSettings): AddressPolicy => {
  const allowed = settings.allowedCidrs.map(parseCidr);
  return {
    allows(address: string): boolean {
      const text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
      if (!isIP(text)) return false;
      const a = ipaddr.parse(text);
      const v4s = a.kind() === 'ipv6' ? embeddedV4(a as ipaddr.IPv6) : [];
      // An operator exception covers the address itself or the IPv4 it stands for (::ffff:127.0.0.1
      // is 127.0.0.1 on a dual-stack socket).
      if (inAny(a, allowed) || (v4s.length > 0 && v4s.every((v) => inAny(v, allowed)))) return true;
      if (a.kind() === 'ipv4') return publicV4(a as ipaddr.IPv4);
      if (v4s.length > 0) return v4s.every(publicV4);
      const [net, bits] = GLOBAL_UNICAST_V6;
      return a.match(net, bits) && a.range() === 'unicast' && !isMetadata(a);
    },
  };
};

// checkUrl runs before every request: the parsed ranges are kept per settings object.
const cache = new WeakMap<OutboundSettings, AddressPolicy>();
export const cachedPolicy = (settings: OutboundSettings): AddressPolicy => {
  let policy = cache.get(settings);
  if (!policy) cache.set(settings, (policy = addressPolicy(settings)));
  return policy;
};
