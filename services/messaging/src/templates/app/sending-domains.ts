// Sending domain use cases, one per RPC of SendingDomainService, and the domain policy every send,
// sender profile and landing page goes through (MAIL_DOMAIN_VERIFICATION):
// - an account proves it controls a domain by a TXT record `_mailer.<domain>` holding a token made for
//   this account and domain; two accounts may each prove the same domain, each with its own token;
// - each account and domain gets its own DKIM key pair (RSA 2048, selector `mailer<10 hex>`), the
//   private key sealed under SECRET_SEALING_KEY with "<accountId>:<domain>" as context, so a sealed key
//   copied to another account's record does not even open; a key sealed under a former key (in
//   SECRET_SEALING_KEY_PREVIOUS) still opens and is re-sealed under the current one when it signs, or
//   all at once by the operator's `reseal-secrets` (resealDkimKeys);
// - mail is signed with the SENDING account's key for its From domain, once that domain is VERIFIED in
//   the account, never with another account's. With `off`, mail from a domain the account has not
//   verified is signed with the operator's DKIM_KEYS as before; with `required` it is not signed (and
//   cannot be accepted: sender profiles, sends and landing pages are refused).
import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { conflict, DomainError, failedPrecondition, notFound, type Logger } from '@mailer/kit';
import { acrossAccounts, type Store } from '@mailer/store';
import { SealedValueError, type Sealer } from '@mailer/tokens';
import type { FormsUsing } from '../../clients/forms';
import type { TxtLookup } from '../../clients/dns';
import type { DkimKey } from '../../mail/domain/outgoing-mail';
import { domainOf } from '../domain/sender-profile';
import { canonicalDomain, dkimRecord, hostOf, ownershipRecord, requireDomain, verificationOutcome, type DnsRecord } from '../domain/sending-domain';
import { senderProfilesOf } from '../store/sender-profiles';
import { sendingDomainCollection, SendingDomainExistsError, sendingDomainsOf, type SendingDomainDoc } from '../store/sending-domains';

export type DomainVerification = 'required' | 'off';
export type DomainUse = 'SENDER' | 'PAGE';

export interface SendingDomainDeps {
  store: Store;
  now(): Date;
  newId(): string;
  /** Seals the DKIM private keys (SECRET_SEALING_KEY and its previous values); null without it: no domain can be added. */
  keys: Sealer | null;
  dns: TxtLookup;
  /** The form service's view of the landing pages served on a domain (delete checks); absent: none is. */
  forms?: Pick<FormsUsing, 'formsUsing'>;
}

const generateRsaKeyPair = promisify(generateKeyPair);
/** Sealing context of a domain's private key: bound to its account and domain. */
const keyContext = (accountId: string, domain: string) => `${accountId}:${domain}`;

export const sendingDomainNotFound = (domain: string) => notFound('sending_domain_not_found', `the account has no sending domain ${domain.slice(0, 253)}`);

/** The record's DNS records, ownership first. */
export const recordsOf = (d: SendingDomainDoc): DnsRecord[] => [ownershipRecord(d.domain, d.token), dkimRecord(d.domain, d.dkim.selector, d.dkim.publicKey)];

async function existing(deps: Pick<SendingDomainDeps, 'store'>, accountId: string, raw: string): Promise<SendingDomainDoc> {
  // A path that is not a domain name names no domain of the account.
  const domain = canonicalDomain(raw ?? '');
  const doc = domain && (await sendingDomainsOf(deps.store, accountId).get(domain));
  if (!doc) throw sendingDomainNotFound(raw ?? '');
  return doc;
}

export const listSendingDomains = (deps: Pick<SendingDomainDeps, 'store'>, accountId: string) => sendingDomainsOf(deps.store, accountId).list();

export const getSendingDomain = (deps: Pick<SendingDomainDeps, 'store'>, accountId: string, domain: string) => existing(deps, accountId, domain);

export async function createSendingDomain(deps: SendingDomainDeps, accountId: string, raw: string): Promise<SendingDomainDoc> {
  const domain = requireDomain(raw, 'body.domain');
  if (!deps.keys) {
    throw new DomainError(status.UNAVAILABLE, 'service_unavailable', 'sending domains cannot be added: the operator has not set SECRET_SEALING_KEY on the messaging service');
  }
  const domains = sendingDomainsOf(deps.store, accountId);
  const exists = () => conflict('sending_domain_exists', `the account already has the sending domain ${domain}`, [{ path: 'body.domain', problem: 'already added' }]);
  if (await domains.get(domain)) throw exists();
  const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  try {
    return await domains.insert({
      _id: deps.newId(),
      domain,
      status: 'PENDING',
      token: randomBytes(16).toString('hex'),
      dkim: { selector: `mailer${randomBytes(5).toString('hex')}`, publicKey: publicKey.toString('base64'), sealedPrivateKey: deps.keys.seal(privateKey, keyContext(accountId, domain)) },
      problems: [],
      verifiedAt: null,
      checkedAt: null,
      createdAt: deps.now(),
    });
  } catch (err) {
    if (err instanceof SendingDomainExistsError) throw exists(); // a concurrent create won
    throw err;
  }
}

/** Looks both records up now and records the outcome (see domain/sending-domain.ts verificationOutcome). */
export async function verifySendingDomain(deps: SendingDomainDeps, accountId: string, raw: string): Promise<SendingDomainDoc> {
  const doc = await existing(deps, accountId, raw);
  const [ownership, dkim] = recordsOf(doc);
  const [foundOwnership, foundDkim] = await Promise.all([deps.dns.txt(ownership.name), deps.dns.txt(dkim.name)]);
  const outcome = verificationOutcome(doc.status, { ownership, dkim }, { ownership: foundOwnership, dkim: foundDkim });
  const now = deps.now();
  const verifiedAt = outcome.status === 'VERIFIED' ? (doc.status === 'VERIFIED' && doc.verifiedAt ? doc.verifiedAt : now) : null;
  const updated = await sendingDomainsOf(deps.store, accountId).recordCheck(doc.domain, { ...outcome, verifiedAt, checkedAt: now });
  if (!updated) throw sendingDomainNotFound(doc.domain); // deleted meanwhile
  return updated;
}

/** Refused with `409 sending_domain_in_use` while a sender profile sends from it or a landing page is served on it. */
export async function deleteSendingDomain(deps: SendingDomainDeps, accountId: string, raw: string): Promise<void> {
  const { domain } = await existing(deps, accountId, raw);
  const profiles = (await senderProfilesOf(deps.store, accountId).list()).filter((p) => domainOf(p.fromEmail) === domain);
  if (profiles.length) {
    throw failedPrecondition('sending_domain_in_use', `${profiles.length} sender profile(s) send from ${domain}; change or delete them first`,
      profiles.slice(0, 50).map((p) => ({ path: `senderProfiles.${p._id}`, problem: `sender profile "${p.name}" sends from ${p.fromEmail}` })));
  }
  const forms = await deps.forms?.formsUsing(accountId, { domain });
  if (forms?.count) {
    throw failedPrecondition('sending_domain_in_use', `${forms.count} landing page(s) are served on ${domain}; change or delete those forms first`,
      forms.forms.map((f) => ({ path: `forms.${f.id}`, problem: `form "${f.name}" serves its landing page on this domain` })));
  }
  if (!(await sendingDomainsOf(deps.store, accountId).remove(domain))) throw sendingDomainNotFound(domain);
}

/** What sends, sender profiles and landing pages ask of an account's domains. */
export interface DomainPolicy {
  /**
   * Resolves when the account may use `domain` (a host, any port ignored) for `use`; with `required`
   * and the domain not VERIFIED in the account: `409 sender_domain_not_verified` or
   * `409 page_domain_not_verified`, naming `path`.
   */
  requireVerified(accountId: string, domain: string, use: DomainUse, path: string): Promise<void>;
  /** The key that signs the account's mail from `domain`, or null (unsigned). */
  dkimKeyFor(accountId: string, domain: string): Promise<DkimKey | null>;
}

export function domainPolicy(deps: {
  store: Store;
  verification: DomainVerification;
  keys: Sealer | null;
  /** DKIM_KEYS (lower-case domains), used with `off` only. */
  operatorKeys: Readonly<Record<string, DkimKey>>;
  logger?: Pick<Logger, 'error'>;
}): DomainPolicy {
  return {
    async requireVerified(accountId, domain, use, path) {
      if (deps.verification === 'off') return;
      const host = hostOf(domain.toLowerCase());
      if (await sendingDomainsOf(deps.store, accountId).verified(host)) return;
      const [errorId, what] = use === 'SENDER' ? ['sender_domain_not_verified', 'send from'] : ['page_domain_not_verified', 'serve landing pages on'];
      throw failedPrecondition(errorId, `the account has not verified ${host}, so it cannot ${what} it: add it (POST /sending-domains), publish its records, then POST /sending-domains/${host}/verify`, [
        { path, problem: `${host} is not a VERIFIED sending domain of the account` },
      ]);
    },
    async dkimKeyFor(accountId, domain) {
      const own = await sendingDomainsOf(deps.store, accountId).verified(domain);
      if (own && deps.keys) {
        let opened;
        try {
          opened = deps.keys.unseal(own.dkim.sealedPrivateKey, keyContext(accountId, domain));
        } catch {
          // A replaced SECRET_SEALING_KEY: the key is lost; never fall back to a key of someone else.
          deps.logger?.error({ accountId, domain }, 'the DKIM key of a verified sending domain opens with neither SECRET_SEALING_KEY nor SECRET_SEALING_KEY_PREVIOUS; the mail goes unsigned');
          return null;
        }
        // Sealed under a previous key: under the current one from now on (a failure is retried at the next send).
        if (opened.stale) await resealKey(deps.store, deps.keys, own, opened.value).catch((err) => deps.logger?.error({ err, accountId, domain }, 'the DKIM key could not be re-sealed'));
        return { selector: own.dkim.selector, privateKey: opened.value };
      }
      if (deps.verification === 'off' && Object.prototype.hasOwnProperty.call(deps.operatorKeys, domain)) return deps.operatorKeys[domain];
      return null;
    },
  };
}

/** Seals a domain's private key again under the current key, unless it changed since it was read. */
const resealKey = (store: Store, keys: Sealer, d: SendingDomainDoc, privateKey: string): Promise<boolean> =>
  sendingDomainsOf(store, d.accountId).replaceSealedKey(d.domain, d.dkim.sealedPrivateKey, keys.seal(privateKey, keyContext(d.accountId, d.domain)));

/**
 * The operator's `reseal-secrets` (after a SECRET_SEALING_KEY rotation), across all accounts: every
 * DKIM key sealed under a previous key is sealed again under the current one. `failed` names the
 * domains (`<accountId>/<domain>`) whose key no configured key opens: they sign nothing until that key
 * is configured again. Once `resealed` is 0 and `failed` empty, SECRET_SEALING_KEY_PREVIOUS can go.
 */
export async function resealDkimKeys(deps: Pick<SendingDomainDeps, 'store' | 'keys'>): Promise<{ domains: number; resealed: number; failed: string[] }> {
  const all = await acrossAccounts(sendingDomainCollection(deps.store)).find({}, { sort: { accountId: 1, domain: 1 } });
  let resealed = 0;
  const failed: string[] = [];
  for (const d of all) {
    try {
      if (!deps.keys) throw new SealedValueError('no SECRET_SEALING_KEY');
      const opened = deps.keys.unseal(d.dkim.sealedPrivateKey, keyContext(d.accountId, d.domain));
      if (opened.stale && (await resealKey(deps.store, deps.keys, d, opened.value))) resealed++;
    } catch (err) {
      if (!(err instanceof SealedValueError)) throw err;
      failed.push(`${d.accountId}/${d.domain}`);
    }
  }
  return { domains: all.length, resealed, failed };
}
