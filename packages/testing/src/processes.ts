import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHUTDOWN_EXIT_MS, type ProcessName } from '@mailer/kit';
import { processCredentials } from './internal-access';
import { freePort } from './nats';

/** The repository root (packages/testing/dist/.. or src/..). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');

export const SERVICES = ['subscriber', 'segment', 'form', 'rss', 'messaging', 'webhook'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningProcess {
  pid: number;
  /** Fields of the process's "ready" log line (ports it bound). */
  ready: Record<string, unknown>;
  /** Everything the process printed so far (for assertions and failure messages). */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  kill9(): Promise<void>;
}

/** PIDs of the processes whose parent is `pid` (from /proc; Linux only, as the runner tests are). */
export function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Spawns `node <script>` and resolves once it logs its "ready" line (pino JSON with msg "ready",
 * at info level: LOG_LEVEL must stay info or lower). Fails loudly with the process's output when
 * it exits or is not ready in time. NODE_EXEC_ARGS (space-separated; from `env`, else the environment)
 * goes on node's command line, for flags NODE_OPTIONS refuses (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` when profiling a bench).
 * A process's own entry point (`gateway/dist/main.js`, `services/<name>/dist/main.js`) runs as its
 * own NATS user with the run's gRPC secret (internal-access.ts), unless `env` says otherwise.
 */
export async function spawnReady(script: string, env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<RunningProcess> {
  const file = path.join(repoRoot, script);
  if (!fs.existsSync(file)) throw new Error(`${script} is not built: run \`npm run build\` first`);
  const execArgs = (env.NODE_EXEC_ARGS ?? process.env.NODE_EXEC_ARGS ?? '').split(' ').filter(Boolean);
  const entry = /^(?:services\/([a-z-]+)|(gateway))\/dist\/main\.js$/.exec(script);
  const credentials = entry ? processCredentials((entry[1] ?? entry[2]) as ProcessName) : {};
  const child = spawn(process.execPath, [...execArgs, file], { env: { ...process.env, ...credentials, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  // Output is kept for assertions on logs and for failure messages; the "ready" scan looks only
  // at new lines and stops once found (rescanning everything per chunk would be quadratic).
  let out = '';
  let pending = '';
  let onLine: ((line: string) => void) | undefined;
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    out += text;
    if (!onLine) return;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) onLine?.(line);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    running.delete(child);
    resolve(code);
  }));
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} was not ready within ${timeoutMs} ms:\n${out.slice(-4000)}`));
    }, timeoutMs);
    onLine = (line) => {
      if (!line.includes('"msg":"ready"')) return;
      clearTimeout(timer);
      onLine = undefined;
      try {
        resolve(JSON.parse(line));
      } catch {
        resolve({});
      }
    };
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with code ${code} before it was ready:\n${out.slice(-4000)}`));
    });
  });
  return {
    pid: child.pid!,
    ready,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      // A process answers what is in flight before it exits (SHUTDOWN_EXIT_MS after its SHUTDOWN_DELAY_MS): only a hung one is killed.
      const timer = setTimeout(() => child.kill('SIGKILL'), SHUTDOWN_EXIT_MS + 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface RunningService extends RunningProcess {
  name: ServiceName;
  /** host:port the service listens on (what a client dials). */
  address: string;
  dataDir: string;
}

/** Starts one gRPC service as a real process on free ports with its own embedded store. */
export async function startService(
  name: ServiceName,
  env: { NATS_URL: string; DATA_DIR?: string } & NodeJS.ProcessEnv,
  /** How long it may take to be ready (a large embedded store loads everything first). */
  timeoutMs?: number,
): Promise<RunningService> {
  const dataDir = env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), `mailer-${name}-`));
  // An address given in `env` is kept (its peers know it already, e.g. a mesh); else a free port,
  // which can still be taken before the service binds it: then other ports are tried.
  const given = env[`${name.toUpperCase()}_GRPC_ADDR`];
  for (let attempt = 1; ; attempt++) {
    const address = given ?? `127.0.0.1:${await freePort()}`;
    try {
      const proc = await spawnReady(`services/${name}/dist/main.js`, {
        LOG_LEVEL: 'info',
        METRICS_PORT: '0',
        ...(name === 'messaging' ? await messagingListeners() : {}),
        ...(name === 'form' ? await formListeners() : {}),
        ...(name === 'webhook' ? { SECRET_SEALING_KEY: crypto.randomBytes(32).toString('base64') } : {}),
        ...env,
        DATA_DIR: dataDir,
        [`${name.toUpperCase()}_GRPC_ADDR`]: address,
      }, timeoutMs);
      return { ...proc, name, address, dataDir };
    } catch (err) {
      if (given || attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

/**
 * The messaging service's other listeners (reader pages, inbound bounces) on free ports, and a
 * tracking secret of its own: a test overrides any of them through `env`.
 */
async function messagingListeners(): Promise<NodeJS.ProcessEnv> {
  return {
    MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
    BOUNCE_SMTP_PORT: String(await freePort()),
    TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
  };
}

/** The form service's public listener on a free port, and a tracking secret of its own. */
async function formListeners(): Promise<NodeJS.ProcessEnv> {
  return {
    FORM_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
    TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
  };
}

/** The `<SVC>_GRPC_ADDR` variables that point a gateway at running services. */
export function serviceAddresses(services: RunningService[]): Record<string, string> {
  return Object.fromEntries(services.map((s) => [`${s.name.toUpperCase()}_GRPC_ADDR`, s.address]));
}
