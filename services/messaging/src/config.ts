import { isIP } from 'node:net';
import { commonConfig, hostPort, loadConfig, peerAddressDefaults, port, previousMasterKeys, retentionDays, storeConfig, TIME_LIMITS, z } from '@mailer/kit';

const flag = (fallback: 'true' | 'false') => z.enum(['true', 'false']).default(fallback).transform((v) => v === 'true');
const commaList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  // Its own address and its peers' (GRPC_CALLS in @mailer/kit says why each).
  ...peerAddressDefaults('messaging'),
  /** Reader-facing listener (/t/* tracking, /u/* unsubscribe); the gateway forwards those prefixes here. */
  MESSAGING_HTTP_ADDR: hostPort.default('127.0.0.1:7155'),
  /** Absolute prefix of every link written into mail (the gateway's public address). */
  PUBLIC_BASE_URL: z
    .string()
    .url()
    .default('http://127.0.0.1:8080')
    .transform((v) => v.replace(/\/+$/, '')),
  /** Outgoing relay: smtp://host:port or smtps://user:pass@host:port. */
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'expected smtp://host:port or smtps://host:port').default('smtp://127.0.0.1:1025'),
  /** Connections of the pooled transport, and messages sent at once by this replica. */
  SMTP_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(5),
  MAIL_SEND_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(20),
  /** Messages per second one account may send (per replica). */
  MAIL_ACCOUNT_RATE_PER_SECOND: z.coerce.number().min(0.1).max(100_000).default(100),
  /**
   * Waits before the retries of a temporarily failed message (4xx, connection error), in seconds: a
   * message is tried once plus once per entry, then FAILED (the API contract: about 24 h in all). Tests shorten it.
   */
  MAIL_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default('60,300,1800,7200,21600,43200')
    .transform((v, ctx) => {
      const delays = v.split(',').map((s) => Number(s.trim()));
      if (delays.length === 0 || delays.some((d) => !Number.isFinite(d) || d < 0)) {
        ctx.addIssue({ code: 'custom', message: 'MAIL_RETRY_SCHEDULE_SECONDS must be a comma list of seconds >= 0, e.g. 60,300,1800' });
        return z.NEVER;
      }
      return delays;
    }),
  /**
   * true: this replica accepts messages but runs no delivery worker; jobs wait on JOBS until a replica
   * without it runs (an incident brake for operators; the acceptance tests use it to see queued jobs).
   */
  MAIL_SEND_PAUSED: flag('false'),
  /** `accept`: the relay's 250 confirms delivery; `dsn`: a success DSN does. */
  MAIL_DELIVERY_CONFIRMATION: z.enum(['accept', 'dsn']).default('accept'),
  /** Comma list of domains a sender profile's fromEmail may use; empty: any. */
  MAIL_ALLOWED_FROM_DOMAINS: commaList,
  /**
   * DKIM keys per sender domain: JSON `{"example.com": {"selector": "s1", "privateKey": "-----BEGIN..."}}`
   * (usually mounted from a Secret). Mail from other domains goes unsigned. Used only with
   * MAIL_DOMAIN_VERIFICATION=off, for mail from a domain the sending account has not verified itself:
   * with `required` an account's mail is signed with its own key only.
   */
  DKIM_KEYS: z
    .string()
    .default('{}')
    .transform((v, ctx) => {
      try {
        const parsed = JSON.parse(v) as Record<string, { selector?: unknown; privateKey?: unknown }>;
        const keys: Record<string, { selector: string; privateKey: string }> = {};
        for (const [domain, key] of Object.entries(parsed ?? {})) {
          if (typeof key?.selector !== 'string' || typeof key?.privateKey !== 'string') throw new Error(`${domain}: needs selector and privateKey strings`);
          keys[domain.toLowerCase()] = { selector: key.selector, privateKey: key.privateKey };
        }
        return keys;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `DKIM_KEYS must be a JSON object of {selector, privateKey} by domain (${(err as Error).message})` });
        return z.NEVER;
      }
    }),
  /**
   * `required`: an account sends from (and serves landing pages on) only the domains it has VERIFIED
   * (GET/POST /sending-domains), and its mail is DKIM-signed with its own key for that domain only.
   * `off`: any domain, signed with DKIM_KEYS when they have the sender's domain (logged as a warning).
   * The default of the bare process is `off` so an upgrade does not stop existing senders at once; the
   * chart sets `required`.
   */
  MAIL_DOMAIN_VERIFICATION: z.enum(['required', 'off']).default('off'),
  /** Resolvers for domain verification: comma list of ip[:port] ([ipv6]:port); empty: the system's. */
  DNS_SERVERS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const servers = v.split(',').map((s) => s.trim()).filter(Boolean);
      for (const server of servers) {
        if (isIP(server) !== 0) continue; // a bare address (IPv6 included): port 53
        const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d{1,5}))?$/.exec(server);
        const host = m?.[1] ?? m?.[2];
        const portNumber = m?.[3] === undefined ? 53 : Number(m[3]);
        if (!host || isIP(host) === 0 || (m?.[1] !== undefined && isIP(host) !== 6) || portNumber < 1 || portNumber > 65535) {
          ctx.addIssue({ code: 'custom', message: `"${server}" is not an IP address with an optional port (e.g. 10.0.0.10:53 or [fd00::10]:53)` });
          return z.NEVER;
        }
      }
      return servers;
    }),
  /**
   * Base64 of 32 random bytes: the master key the sending domains' DKIM private keys are sealed under
   * (AES-256-GCM, a key derived for that use). Required with MAIL_DOMAIN_VERIFICATION=required; without
   * it no sending domain can be added. Must stay stable (and be backed up): without it the sealed keys
   * are lost.
   */
  SECRET_SEALING_KEY: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return null;
      const bytes = Buffer.from(v.trim(), 'base64');
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v.trim()) || bytes.length !== 32) {
        ctx.addIssue({ code: 'custom', message: 'SECRET_SEALING_KEY must be base64 of 32 random bytes (openssl rand -base64 32)' });
        return z.NEVER;
      }
      return bytes;
    }),
  /**
   * Former sealing keys (comma list, newest first) during a rotation: DKIM keys they sealed still open,
   * and are re-sealed under SECRET_SEALING_KEY when used or by the operator's `reseal-secrets`.
   */
  SECRET_SEALING_KEY_PREVIOUS: previousMasterKeys,
  /** VERP domain of return paths, and the inbound SMTP listener for DSNs and complaints. */
  BOUNCE_DOMAIN: z.string().min(1).default('bounces.localhost'),
  BOUNCE_SMTP_PORT: port.default(2525),
  BOUNCE_SMTP_HOST: z.string().min(1).default('127.0.0.1'),
  /** Open connections one client address (an IPv6 client's /64) may hold on the bounce listener; more get 421. */
  BOUNCE_SMTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(200).default(10),
  /** A bounce-listener connection idle this long is closed (relays send a report in one go). */
  BOUNCE_SMTP_SOCKET_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  /**
   * Signs tracking, unsubscribe and VERP tokens (each purpose gets its own key derived from it);
   * at least 32 bytes. TRACKING_SECRET_PREVIOUS (comma list) keeps links of a rotated secret working.
   */
  TRACKING_SECRET: z.string().min(32, 'TRACKING_SECRET must have at least 32 characters'),
  // Not commaList: that lower-cases (domains), which would turn a rotated secret into another one.
  TRACKING_SECRET_PREVIOUS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /** Treat opens/clicks within this many ms of delivery as machine events (the API contract: 2 s). */
  MACHINE_EVENT_WINDOW_MS: z.coerce.number().int().min(0).default(2_000),
  /** Custom events (EVENTS stream) one replica records at once, in two batches of half as many (one store transaction each). */
  EVENTS_CONSUMER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(256),
  /** Automation runs one replica executes at once (automation-run jobs and resumed waits together). */
  AUTOMATION_RUN_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  /** Days a message record is kept after it was created (its rendered body goes once it is final). */
  MESSAGE_RETENTION_DAYS: retentionDays(30),
  /** Days a recorded custom event (GET /events) is kept after it was received. */
  EVENT_RETENTION_DAYS: retentionDays(30),
  /** Days the email and event reports' daily aggregates are kept: reports over older periods count nothing. */
  REPORT_RETENTION_DAYS: retentionDays(730),
  /** Days a finished automation run is kept after it finished (unfinished runs are kept; ONCE entries outlive them). */
  RUN_RETENTION_DAYS: retentionDays(90),
  /** Outbox relay of the email.* facts. */
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /**
   * POST /email-messages answers once its delivery job has a PubAck, waiting at most this long (0: no
   * wait; never longer than the gateway's deadline allows for).
   */
  OUTBOX_PUBLISH_WAIT_MS: z.coerce.number().int().min(0).max(TIME_LIMITS.publishWait).default(TIME_LIMITS.publishWait),
  /** Readers per page of a broadcast's audience, and recipients per queueing step: one store transaction each. */
  BROADCAST_SEND_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(500),
  /** How long a broadcast's send is held by the replica sending it without progress: after a crash it resumes this much later. */
  BROADCAST_SEND_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** After a step of a broadcast's send fails, it is tried again this much later. */
  BROADCAST_SEND_RETRY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /**
   * Failed tries in a row (for a reason other than a service not answering) after which a broadcast is
   * FAILED with lastError, counted in mailer_broadcasts_failed_total.
   */
  BROADCAST_SEND_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /** Tests only: the length in ms of one of abTest.decideAfterMinutes' minutes (keep 60000 in production). */
  BROADCAST_AB_MINUTE_MS: z.coerce.number().int().min(1).max(60_000).default(60_000),
}).refine((c) => c.MAIL_DOMAIN_VERIFICATION === 'off' || c.SECRET_SEALING_KEY !== null, {
  message: 'SECRET_SEALING_KEY is required with MAIL_DOMAIN_VERIFICATION=required (base64 of 32 random bytes: the DKIM keys of sending domains are sealed under it)',
  path: ['SECRET_SEALING_KEY'],
}).refine((c) => c.SECRET_SEALING_KEY !== null || c.SECRET_SEALING_KEY_PREVIOUS.length === 0, {
  message: 'SECRET_SEALING_KEY_PREVIOUS needs SECRET_SEALING_KEY (the current key, which re-seals what the previous ones sealed)',
  path: ['SECRET_SEALING_KEY_PREVIOUS'],
});
export type Config = z.infer<typeof configSchema>;

export const loadMessagingConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
