// The double opt-in confirm link (the API contract "Public web surface", "Forms"): `/public/confirm/<token>`,
// the token signed for the `confirm` purpose with a key derived from TRACKING_SECRET (as the
// messaging service derives its link keys; TRACKING_SECRET_PREVIOUS keeps links of a rotated secret
// working), bound to one account and one submission, always with an expiry.
import { deriveKeyring, signToken, verifyTokenResult, type VerifyResult } from '@mailer/tokens';

export interface ConfirmTokenSettings {
  PUBLIC_BASE_URL: string;
  TRACKING_SECRET: string;
  TRACKING_SECRET_PREVIOUS: string[];
}

export function confirmTokens(settings: ConfirmTokenSettings) {
  const keys = deriveKeyring([settings.TRACKING_SECRET, ...settings.TRACKING_SECRET_PREVIOUS], 'confirm');
  return {
    /** The absolute confirm link of a submission, valid until `expiresAt` (kept at whole seconds). */
    url(accountId: string, submissionId: string, expiresAt: Date): string {
      const token = signToken(keys, { purpose: 'confirm', accountId, submissionId }, { expiresAt });
      return `${settings.PUBLIC_BASE_URL}/public/confirm/${token}`;
    },
    /** The token's claims, or why not: `expired` (authentic, past its expiry) or `invalid` (forged, edited, foreign). */
    verify: (token: string, now: Date): VerifyResult<'confirm'> => verifyTokenResult(keys, token, 'confirm', { now: () => now.getTime() }),
  };
}
export type ConfirmTokens = ReturnType<typeof confirmTokens>;
