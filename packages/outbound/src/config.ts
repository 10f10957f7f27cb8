import { z } from 'zod';
import { outboundSettings, type OutboundSettings } from './policy';

// The two settings as fields of a service's config schema (kit's loadConfig), so every process that
// fetches customer URLs (webhook, rss) validates them the same way and refuses to start on a bad value.
const parsed = (name: 'OUTBOUND_ALLOW_HTTP' | 'OUTBOUND_ALLOWED_CIDRS') =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      try {
        return outboundSettings({ [name]: value });
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

export const outboundConfig = {
  /** https only unless true (production: false; `npm run up`: true). */
  OUTBOUND_ALLOW_HTTP: parsed('OUTBOUND_ALLOW_HTTP').transform((s) => s.allowHttp),
  /** Comma list of ranges reachable although not public (production: empty; `npm run up`: loopback). */
  OUTBOUND_ALLOWED_CIDRS: parsed('OUTBOUND_ALLOWED_CIDRS').transform((s) => s.allowedCidrs),
};

/** The guard's settings out of a config parsed with `outboundConfig`. */
export const outboundSettingsOf = (config: { OUTBOUND_ALLOW_HTTP: boolean; OUTBOUND_ALLOWED_CIDRS: string[] }): OutboundSettings => ({
  allowHttp: config.OUTBOUND_ALLOW_HTTP,
  allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS,
});
