import { connect, ErrorCode, NatsConnection } from 'nats';
import { inboxPrefix } from './access';
import { errorInfo, Log, silent } from './log';

export interface ConnectNatsOptions {
  /** One URL or a comma-separated list (a cluster's seed servers). */
  url: string;
  /** Connection name shown by the server's monitoring (`connz`): use the service name. */
  name: string;
  log?: Log;
  /** How long to keep trying to reach the server at start-up. Default 30 s. */
  timeoutMs?: number;
  /** This process's NATS user and password (its permissions: access.ts); absent: none sent. */
  user?: string;
  pass?: string;
  /**
   * TLS to the server (PEM files): the CA that signed the server's certificate, and a client
   * certificate and key where the server verifies clients. Absent: TLS only if the URL says tls://.
   */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

// Credentials problems do not heal by waiting: fail at once instead of burning the whole timeout.
const FATAL_CODES = new Set<string>([
  ErrorCode.AuthorizationViolation,
  ErrorCode.BadAuthentication,
  ErrorCode.BadCreds,
  ErrorCode.AuthenticationExpired,
  ErrorCode.AccountExpired,
  ErrorCode.InvalidOption,
  ErrorCode.Tls,
]);

/**
 * Connects with a start-up deadline, then reconnects forever.
 *
 * Processes start in any order (the local runner, Kubernetes), so NATS may come up after us: the first
 * connection is retried with capped exponential backoff until `timeoutMs`, then a clear error stops the
 * process. This bounded loop replaces the client's `waitOnFirstConnect`, which would wait without a
 * deadline. Once connected, an outage must never kill the process, hence unlimited reconnects.
 */
export async function connectNats(opts: ConnectNatsOptions): Promise<NatsConnection> {
  const log = opts.log ?? silent;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const servers = opts.url.split(',').map((s) => s.trim()).filter(Boolean);
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_RETRY_MS;
  let attempt = 0;
  let lastError: unknown;

  while (true) {
    attempt++;
    const remaining = deadline - Date.now();
    try {
      const nc = await connect({
        servers,
        name: opts.name,
        ...(opts.user !== undefined ? { user: opts.user, pass: opts.pass } : {}),
        ...(opts.tls ? { tls: opts.tls } : {}),
        // Replies (and KV watch deliveries) arrive under the process's own prefix, the only inbox
        // its NATS user may subscribe to: no process reads another's answers.
        inboxPrefix: inboxPrefix(opts.name),
        // Each attempt gives up quickly so the loop, not the client, owns the overall deadline.
        timeout: Math.max(500, Math.min(remaining, 5_000)),
        waitOnFirstConnect: false,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1_000,
        reconnectJitter: 500,
        // Async traces build two Error objects (stack captures) per request: ~8% of the gateway's
        // CPU under load, spent on KV reads. Timeouts still report which subject timed out.
        noAsyncTraces: true,
      });
      log('nats connected', { server: nc.getServer(), name: opts.name, attempts: attempt });
      watchStatus(nc, log);
      return nc;
    } catch (err) {
      lastError = err;
      const code = (err as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && FATAL_CODES.has(code)) {
        throw new Error(`cannot connect to NATS at ${opts.url}: ${(err as Error).message}`);
      }
    }
    const wait = Math.min(delay, deadline - Date.now());
    if (wait <= 0) break;
    log('nats not reachable yet, retrying', { url: opts.url, attempt, retryInMs: wait, ...errorInfo(lastError) });
    await new Promise((r) => setTimeout(r, wait));
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new Error(`cannot connect to NATS at ${opts.url} within ${timeoutMs} ms (${attempt} attempts, last error: ${reason})`);
}

// Connection-level events are what an operator needs to correlate outages; log them once here.
function watchStatus(nc: NatsConnection, log: Log): void {
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'ldm' || s.type === 'error') {
        log(`nats ${s.type}`, { data: String(s.data) });
      }
    }
  })().catch(() => {
    // the status iterator ends with the connection; nothing to report
  });
}
