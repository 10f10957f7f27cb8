import { z } from 'zod';
import { parseMasterKey } from '@mailer/tokens';

export { z };

/**
 * Reads and validates one process's configuration from the environment. A missing or bad value
 * stops the process with one clear line per problem, before anything starts listening.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
  exit: (message: string) => never = exitWithMessage,
): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  return exit(`invalid configuration:\n${lines.join('\n')}`);
}

function exitWithMessage(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(78); // EX_CONFIG
}

/** `host:port` with a numeric port. */
export const hostPort = z
  .string()
  .regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port, e.g. 127.0.0.1:7051');

export const port = z.coerce.number().int().min(0).max(65535);

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** An optional setting: unset and empty both mean absent. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v ? v : undefined));

/** Settings every process shares: metrics port, log level, NATS and storage. */
export const commonConfig = {
  METRICS_PORT: port.default(0),
  /** Address /metrics binds: every interface (a container's scraper comes from outside); the local runner uses 127.0.0.1. */
  METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: logLevel,
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /**
   * Copies of each JetStream stream and KV bucket the processes create (a NATS cluster keeps them on
   * that many servers; 3 survives the loss of one). 1 on a single server, which refuses more.
   */
  NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** How long a starting process keeps retrying NATS before it gives up (and Kubernetes restarts it). */
  NATS_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * On SIGTERM, how long a process keeps accepting connections (answering not ready / NOT_SERVING,
   * and `Connection: close` on HTTP) before it closes its listeners and drains: the time the
   * orchestrator needs to stop sending it new connections. 0 locally; the chart sets it.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  /** This process's NATS user and password: the server grants each process only its own subjects. */
  NATS_USER: optionalText,
  NATS_PASSWORD: optionalText,
  /** TLS to NATS (PEM file paths): the CA of the server's certificate; a client certificate and key if the server asks for one. */
  NATS_TLS_CA: optionalText,
  NATS_TLS_CERT: optionalText,
  NATS_TLS_KEY: optionalText,
  /**
   * Signs this process's calls to the gRPC services and verifies calls to its own (at least 32
   * characters, the same in every process). Unset: calls are neither signed nor checked.
   */
  INTERNAL_GRPC_SECRET: optionalText.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters'),
};

/** NATS settings of commonConfig, as read from the environment. */
export interface NatsSettings {
  NATS_URL: string;
  NATS_REPLICAS: number;
  NATS_CONNECT_TIMEOUT_MS: number;
  NATS_USER?: string;
  NATS_PASSWORD?: string;
  NATS_TLS_CA?: string;
  NATS_TLS_CERT?: string;
  NATS_TLS_KEY?: string;
}

/**
 * connectNats options from the settings (URL, timeout, credentials, TLS). A user without a password
 * (or a certificate without its key) is a configuration error, said before anything connects.
 */
export function natsConnection(config: NatsSettings) {
  const { NATS_USER: user, NATS_PASSWORD: pass, NATS_TLS_CA: caFile, NATS_TLS_CERT: certFile, NATS_TLS_KEY: keyFile } = config;
  if ((user === undefined) !== (pass === undefined)) throw new Error('invalid configuration: NATS_USER and NATS_PASSWORD go together');
  if ((certFile === undefined) !== (keyFile === undefined)) throw new Error('invalid configuration: NATS_TLS_CERT and NATS_TLS_KEY go together');
  const tls = caFile || certFile ? { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile, keyFile } : {}) } : undefined;
  return { url: config.NATS_URL, timeoutMs: config.NATS_CONNECT_TIMEOUT_MS, ...(user !== undefined ? { user, pass } : {}), ...(tls ? { tls } : {}) };
}

/** Storage of a gRPC service: MongoDB when MONGODB_URI is set, else the embedded store in DATA_DIR. */
export const storeConfig = {
  MONGODB_URI: z.string().url().optional(),
  MONGODB_DATABASE: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  STORE_FSYNC: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
};

/**
 * How many days a log's records are kept (`<LOG>_RETENTION_DAYS`): then MongoDB's TTL monitor, or the
 * embedded store's pruner, removes them. At least 2: reports roll a day up into their daily
 * aggregates one day after it ends, before its records may go.
 */
export const retentionDays = (fallback: number) => z.coerce.number().int().min(2).max(36_500).default(fallback);

const KEY_HINT = 'base64 of 32 random bytes, e.g. `openssl rand -base64 32`';

/** A master key (base64 of 32 random bytes), validated at start and given as its bytes. */
export const masterKey = z.string({ error: `is required (${KEY_HINT})` }).transform((value, ctx) => {
  try {
    return parseMasterKey(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `${(err as Error).message} (${KEY_HINT})` });
    return z.NEVER;
  }
});

/**
 * `<KEY>_PREVIOUS`: former master keys (comma list, newest first), still opening what they sealed
 * until it is re-sealed under the current key (on use, or all at once by the operator CLI).
 */
export const previousMasterKeys = z
  .string()
  .default('')
  .transform((value, ctx) =>
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((key, i) => {
        try {
          return parseMasterKey(key);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `entry ${i + 1}: ${(err as Error).message} (${KEY_HINT})` });
          return z.NEVER;
        }
      }),
  );
/** Said once at start: a process without internal credentials is open to anything on its network. */
export function warnIfUnauthenticated(logger: { warn(msg: string): void }, config: { NATS_USER?: string; INTERNAL_GRPC_SECRET?: string }): void {
  if (!config.NATS_USER) logger.warn('NATS_USER is not set: connecting to NATS without credentials');
  if (!config.INTERNAL_GRPC_SECRET) logger.warn('INTERNAL_GRPC_SECRET is not set: internal gRPC calls are neither signed nor checked');
}
