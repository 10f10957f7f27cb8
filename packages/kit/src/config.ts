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

/** Settings every process shares: metrics port, log level, NATS and storage. */
export const commonConfig = {
  METRICS_PORT: port.default(0),
  /** Address /metrics binds: every interface (a container's scraper comes from outside); the local runner uses 127.0.0.1. */
  METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: logLevel,
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /** How long a starting process keeps retrying NATS before it gives up (and Kubernetes restarts it). */
  NATS_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * On SIGTERM, how long a process keeps accepting connections (answering not ready / NOT_SERVING,
   * and `Connection: close` on HTTP) before it closes its listeners and drains: the time the
   * orchestrator needs to stop sending it new connections. 0 locally; the chart sets it.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
};

/** Storage of a gRPC service: MongoDB when MONGODB_URI is set, else the embedded store in DATA_DIR. */
export const storeConfig = {
  MONGODB_URI: z.string().url().optional(),
  MONGODB_DATABASE: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  STORE_FSYNC: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
};

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
