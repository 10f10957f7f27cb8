// The links and addresses the messaging service writes into mail, and their verification: open pixel
// /t/o/{token}, click redirect /t/c/{token}, preference page /u/{token} (the API contract "Public web surface"),
// and the VERP return path. Each purpose signs with its own key derived from TRACKING_SECRET
// (TRACKING_SECRET_PREVIOUS keeps links of a rotated secret working).
import { deriveKeyring, signToken, verifyToken, type PayloadByPurpose, type VerifiedToken } from '@mailer/tokens';
import { parseVerpAddress, verpAddress } from '../domain/verp';

export interface LinkSettings {
  PUBLIC_BASE_URL: string;
  BOUNCE_DOMAIN: string;
  TRACKING_SECRET: string;
  TRACKING_SECRET_PREVIOUS: string[];
}

type LinkPurpose = 'open' | 'click' | 'unsubscribe';

// VERP local parts allow [a-z0-9] ids only: a UUID travels without its hyphens.
const compactId = (uuid: string) => uuid.replace(/-/g, '');
const uuidOf = (compact: string) =>
  /^[0-9a-f]{32}$/.test(compact) ? `${compact.slice(0, 8)}-${compact.slice(8, 12)}-${compact.slice(12, 16)}-${compact.slice(16, 20)}-${compact.slice(20)}` : null;

export function publicLinks(settings: LinkSettings) {
  const secrets = [settings.TRACKING_SECRET, ...settings.TRACKING_SECRET_PREVIOUS];
  const keys = {
    open: deriveKeyring(secrets, 'open'),
    click: deriveKeyring(secrets, 'click'),
    unsubscribe: deriveKeyring(secrets, 'unsubscribe'),
    verp: deriveKeyring(secrets, 'verp'),
  };
  const base = settings.PUBLIC_BASE_URL;
  const sign = <P extends LinkPurpose>(purpose: P, accountId: string, ids: PayloadByPurpose[P]) =>
    signToken(keys[purpose], { purpose, accountId, ...ids } as never);
  return {
    openUrl: (accountId: string, messageId: string) => `${base}/t/o/${sign('open', accountId, { messageId })}`,
    clickUrl: (accountId: string, messageId: string, linkIndex: number) => `${base}/t/c/${sign('click', accountId, { messageId, linkIndex })}`,
    unsubscribeUrl: (accountId: string, ids: PayloadByPurpose['unsubscribe']) => `${base}/u/${sign('unsubscribe', accountId, ids)}`,
    /** The claims of a token from a public URL, or null when forged, edited, truncated or of another purpose. */
    verify: <P extends LinkPurpose>(purpose: P, token: string): VerifiedToken<P> | null => verifyToken(keys[purpose], token, purpose),
    /** The unique return path of one message. */
    returnPath: (messageId: string) => verpAddress({ messageId: compactId(messageId) }, keys.verp[0], settings.BOUNCE_DOMAIN),
    /** The message a bounce was addressed to, or null for any address this system did not issue. */
    messageOfReturnPath(address: string): string | null {
      for (const key of keys.verp) {
        const target = parseVerpAddress(address, key, settings.BOUNCE_DOMAIN);
        if (target) return uuidOf(target.messageId);
      }
      return null;
    },
  };
}
export type PublicLinks = ReturnType<typeof publicLinks>;
