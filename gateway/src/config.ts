import { commonConfig, hostPort, loadConfig, LONGEST_DEADLINE_MS, masterKey, peerAddressDefaults, port, previousMasterKeys, SHUTDOWN_DRAIN_MS, z } from '@mailer/kit';

/** Every setting of the gateway process, validated at start (a bad value stops it with a clear message). */
export const configSchema = z.object({
  ...commonConfig,
  GATEWAY_PORT: port.default(8080),
  /** Address the public listener binds: every interface (containers); the local runner uses 127.0.0.1. */
  GATEWAY_HOST: z.string().min(1).default('0.0.0.0'),
  /** The admin listener (account and key management) binds to this host only: never expose it publicly. */
  ADMIN_PORT: port.default(8081),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_TOKEN: z.string({ error: 'is required' }).min(32, 'must be at least 32 characters'),
  /** Seals API keys and idempotent answers, and keys the lookup hashes (keys derived per use). */
  API_KEY_MASTER_KEY: masterKey,
  /** Former master keys (comma list): what they sealed still opens, and is re-sealed on use or by `reseal-secrets`. */
  API_KEY_MASTER_KEY_PREVIOUS: previousMasterKeys,
  /**
   * Reverse-proxy hops in front of the gateway whose X-Forwarded-For (client address) and
   * X-Forwarded-Proto (https: HSTS) are trusted (0: the socket's address and protocol).
   */
  GATEWAY_TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /** Strict-Transport-Security max-age sent on answers to https requests (0: no header). */
  GATEWAY_HSTS_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(63_072_000).default(31_536_000),
  /** Requests that fail authentication allowed per client address and minute (throttles key guessing). */
  GATEWAY_UNAUTHENTICATED_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * Lease of each replica's watched copy of the accounts bucket (see src/kv/watched-kv.ts). Key
   * rotation/deletion and limit changes take this long (+10% + 50 ms) to return; 0 reads the bucket
   * on every request instead. Every replica must use the same value.
   */
  GATEWAY_ACCOUNT_LEASE_MS: z.coerce.number().int().min(0).max(10_000).default(300),
  /**
   * On SIGTERM, how long requests in flight may take before the remaining connections are closed
   * (keep-alive connections end after their current answer, which says `Connection: close`). The
   * process exits within this plus a few seconds for NATS and the service clients. Never shorter than
   * the longest deadline of a request (an RSS feed preview), which a rolling update would cut off.
   */
  GATEWAY_SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(LONGEST_DEADLINE_MS, `must be at least ${LONGEST_DEADLINE_MS} (the longest deadline of a request, an RSS feed read: shorter would cut such requests off at a rolling update)`)
    .max(60_000)
    .default(SHUTDOWN_DRAIN_MS),
  ...peerAddressDefaults('gateway'),
  /** The services' reader-facing HTTP listeners the public prefixes are forwarded to (routes/public-web.ts). */
  MESSAGING_HTTP_ADDR: hostPort.default('127.0.0.1:7155'),
  FORM_HTTP_ADDR: hostPort.default('127.0.0.1:7153'),
  /**
   * Requests to the public web surface (/t/*, /u/*, /public/*) per client address and minute, a
   * budget apart from the authentication-failure one: readers behind one NAT share it.
   */
  GATEWAY_PUBLIC_PER_MINUTE: z.coerce.number().int().min(1).default(600),
});

export type GatewayConfig = z.infer<typeof configSchema>;

export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfig(configSchema, env);
}
