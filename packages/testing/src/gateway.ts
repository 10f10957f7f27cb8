// The gateway as a real process for integration tests: `node gateway/dist/main.js` on free ports,
// started once its "ready" log line is out, stopped by PID (SIGTERM, then SIGKILL).
import { randomBytes } from 'node:crypto';
import { spawnReady, type RunningProcess } from './processes';

export interface GatewayHandle {
  /** Public listener, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Admin listener (account and key management). */
  adminUrl: string;
  adminToken: string;
  /** API_KEY_MASTER_KEY the process runs with (replicas sharing a NATS must share it). */
  masterKey: string;
  metricsUrl: string;
  pid: number;
  /** Everything the process printed so far (assert that no key ever reaches a log line). */
  output(): string;
  stop(): Promise<void>;
}

/** Secrets for one deployment: pass the same to every replica that shares a NATS server. */
export function gatewaySecrets(): { ADMIN_TOKEN: string; API_KEY_MASTER_KEY: string } {
  return { ADMIN_TOKEN: randomBytes(24).toString('hex'), API_KEY_MASTER_KEY: randomBytes(32).toString('base64') };
}

/**
 * Starts a gateway. `env` must carry NATS_URL; ADMIN_TOKEN and API_KEY_MASTER_KEY are generated
 * unless given; ports default to 0 (free ones, read back from the ready line).
 */
export async function startGateway(env: { NATS_URL: string } & NodeJS.ProcessEnv): Promise<GatewayHandle> {
  const secrets = { ...gatewaySecrets(), ...pick(env, ['ADMIN_TOKEN', 'API_KEY_MASTER_KEY']) };
  const proc: RunningProcess = await spawnReady('gateway/dist/main.js', {
    LOG_LEVEL: 'info',
    GATEWAY_PORT: '0',
    ADMIN_PORT: '0',
    METRICS_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    MAILER_SERVICE: 'gateway',
    ...env,
    ...secrets,
  });
  const { port, adminPort, metricsPort } = proc.ready as { port: number; adminPort: number; metricsPort: number };
  return {
    url: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    adminToken: secrets.ADMIN_TOKEN,
    masterKey: secrets.API_KEY_MASTER_KEY,
    pid: proc.pid,
    output: proc.output,
    async stop() {
      await proc.stop('SIGTERM');
    },
  };
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (env[n]) out[n] = env[n] as string;
  return out;
}

/** Calls the admin listener; throws with the response body on a non-2xx status. */
export async function adminRequest<T = Record<string, unknown>>(
  gw: Pick<GatewayHandle, 'adminUrl' | 'adminToken'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${gw.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${gw.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`admin ${method} ${path} -> ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Creates an account (and its API key) through the admin API. */
export function createAccount(gw: Pick<GatewayHandle, 'adminUrl' | 'adminToken'>, name: string): Promise<{ accountId: string; apiKey: string }> {
  return adminRequest(gw, 'POST', '/admin/accounts', { name });
}
