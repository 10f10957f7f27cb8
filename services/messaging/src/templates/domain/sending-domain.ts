// Rules of sending domains (pure): what a domain name may be, the DNS records an account publishes to
// prove it controls one (OWNERSHIP) and to let receivers check its mail's signature (DKIM), and what a
// DNS answer means for the domain's status.
import { domainToASCII } from 'node:url';
import { invalid } from '@mailer/kit';

export type SendingDomainStatus = 'PENDING' | 'VERIFIED';
export type DnsRecordPurpose = 'OWNERSHIP' | 'DKIM';

export interface DnsRecord {
  purpose: DnsRecordPurpose;
  type: 'TXT';
  name: string;
  value: string;
}

/** Published in the OpenAPI document (gateway/src/openapi/messaging/sending-domains.ts). */
export const DOMAIN_MAX_LENGTH = 253;
/** Name prefix of the ownership record (`_mailer.<domain>`) and of its value. */
export const OWNERSHIP_PREFIX = '_mailer';
export const OWNERSHIP_VALUE_PREFIX = 'mailer-verification=';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The canonical form of a domain name (lower case, ASCII/punycode, no trailing dot), or null when it
 * is not a host name of at least two labels (an address, a bare word, a label over 63 characters).
 */
export function canonicalDomain(raw: string): string | null {
  const trimmed = raw.trim().replace(/\.$/, '');
  if (trimmed.length === 0 || trimmed.length > DOMAIN_MAX_LENGTH * 4) return null;
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (!ascii || ascii.length > DOMAIN_MAX_LENGTH) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return null; // an IPv4 address, not a name
  return ascii;
}

/** canonicalDomain, or `400 validation_failed` naming `path`. */
export function requireDomain(raw: string, path: string): string {
  const domain = canonicalDomain(raw ?? '');
  if (!domain) {
    throw invalid('validation_failed', `"${String(raw).slice(0, 80)}" is not a domain name such as example.com`, [
      { path, problem: 'a DNS host name of at least two labels (letters, digits, hyphens), at most 253 characters' },
    ]);
  }
  return domain;
}

/** The host of a `host[:port]` (a landing page's domain may carry a port). */
export const hostOf = (hostPort: string): string => hostPort.replace(/:[0-9]+$/, '');

export const ownershipRecord = (domain: string, token: string): DnsRecord => ({
  purpose: 'OWNERSHIP',
  type: 'TXT',
  name: `${OWNERSHIP_PREFIX}.${domain}`,
  value: `${OWNERSHIP_VALUE_PREFIX}${token}`,
});

/** `publicKey`: base64 of the DER SubjectPublicKeyInfo (what `p=` holds, RFC 6376 3.6.1). */
export const dkimRecord = (domain: string, selector: string, publicKey: string): DnsRecord => ({
  purpose: 'DKIM',
  type: 'TXT',
  name: `${selector}._domainkey.${domain}`,
  value: `v=DKIM1; k=rsa; p=${publicKey}`,
});

/** What a TXT lookup found: the records (each one's strings joined), none, or a failure of the lookup itself. */
export type TxtAnswer = { kind: 'records'; records: string[] } | { kind: 'none' } | { kind: 'failed'; reason: string };

export interface VerificationOutcome {
  status: SendingDomainStatus;
  problems: string[];
}

// Tags of a DKIM key record compared as receivers read them: whitespace inside `p=` is insignificant.
const dkimTags = (value: string): Map<string, string> =>
  new Map(value.split(';').map((part) => part.trim()).filter(Boolean).map((part) => {
    const eq = part.indexOf('=');
    return [part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, '')] as [string, string];
  }));

const sameDkimKey = (found: string, expected: string): boolean => {
  const [a, b] = [dkimTags(found), dkimTags(expected)];
  return a.get('p') === b.get('p') && (a.get('k') ?? 'rsa') === 'rsa';
};

/**
 * The status after a lookup of both records. VERIFIED needs the ownership record among the TXT
 * records of its name. A failed lookup (timeout, SERVFAIL) proves nothing either way, so a domain that
 * was VERIFIED stays so; an answer without the record makes it PENDING. The DKIM record never decides
 * the status, but a missing or different one is a problem: mail is signed with a key receivers cannot
 * find until it is published.
 */
export function verificationOutcome(
  previous: SendingDomainStatus,
  expected: { ownership: DnsRecord; dkim: DnsRecord },
  found: { ownership: TxtAnswer; dkim: TxtAnswer },
): VerificationOutcome {
  const problems: string[] = [];
  let status: SendingDomainStatus;
  const { ownership, dkim } = expected;
  if (found.ownership.kind === 'records' && found.ownership.records.includes(ownership.value)) {
    status = 'VERIFIED';
  } else if (found.ownership.kind === 'failed') {
    status = previous;
    problems.push(`the DNS lookup of ${ownership.name} failed (${found.ownership.reason}); try again later`);
  } else {
    status = 'PENDING';
    problems.push(
      found.ownership.kind === 'none'
        ? `no TXT record found at ${ownership.name}: publish ${ownership.name} TXT "${ownership.value}"`
        : `the TXT records at ${ownership.name} do not include "${ownership.value}" (found ${found.ownership.records.length} other record(s))`,
    );
  }
  if (found.dkim.kind === 'failed') problems.push(`the DNS lookup of ${dkim.name} failed (${found.dkim.reason}); try again later`);
  else if (found.dkim.kind === 'none') problems.push(`no DKIM record found at ${dkim.name}: mail from this domain fails DKIM until it is published`);
  else if (!found.dkim.records.some((r) => sameDkimKey(r, dkim.value))) problems.push(`the TXT record at ${dkim.name} does not hold this domain's DKIM public key: publish the value given in records`);
  return { status, problems };
}
