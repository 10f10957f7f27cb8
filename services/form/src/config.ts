import { commonConfig, hostPort, loadConfig, peerAddressDefaults, retentionDays, storeConfig, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  /** Days a form submission is kept after it was submitted. */
  FORM_SUBMISSION_RETENTION_DAYS: retentionDays(90),
  ...peerAddressDefaults('form'),
  /** Public listener (/public/forms, /public/pages, /public/confirm); the gateway forwards those prefixes here. */
  FORM_HTTP_ADDR: hostPort.default('127.0.0.1:7153'),
  /** Absolute prefix of every link written into mail and pages (the gateway's public address). */
  PUBLIC_BASE_URL: z
    .string()
    .url()
    .default('http://127.0.0.1:8080')
    .transform((v) => v.replace(/\/+$/, '')),
  /** Signs confirm tokens (a key derived per purpose); TRACKING_SECRET_PREVIOUS (comma list) keeps rotated links working. */
  TRACKING_SECRET: z.string().min(32, 'TRACKING_SECRET must have at least 32 characters'),
  TRACKING_SECRET_PREVIOUS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /** Public submissions accepted per client address and form in any 60 s (429 beyond). */
  FORM_SUBMISSIONS_PER_MINUTE: z.coerce.number().int().min(1).default(10),
  /** Subscribers an account may have before forms stop adding any (SUPPRESSED_SUBSCRIBER_LIMIT); 0 = no limit. */
  FORM_ACCOUNT_SUBSCRIBER_LIMIT: z.coerce.number().int().min(0).default(0),
  /** Confirmation mails an account's forms may send per UTC day (SUPPRESSED_CUSTOMER_LIMIT); 0 = no limit. */
  FORM_ACCOUNT_DAILY_CONFIRMATIONS: z.coerce.number().int().min(0).default(1000),
  /** Submission jobs decided at once by this process. */
  FORM_SUBMISSION_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * How long the answer "this account still has this landing page's custom domain verified" is kept
   * (app/page-domains.ts): a page on a domain that lost its verification is not found within it.
   */
  FORM_PAGE_DOMAIN_RECHECK_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Days a double opt-in confirm link works (the API contract: 7). */
  FORM_CONFIRM_TOKEN_DAYS: z.coerce.number().int().min(1).max(365).default(7),
});
export type Config = z.infer<typeof configSchema>;

export const loadFormConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
