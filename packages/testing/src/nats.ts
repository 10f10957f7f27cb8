// Real nats-server processes for tests. JetStream semantics (dedup windows, redelivery, max_deliver,
// work-queue retention) are exactly what the code under test relies on, so tests run against the
// real binary rather than a fake; a missing binary is a loud failure, never a skipped test.
import { spawn, ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { harnessCredentials, natsServerConfig, operatorAuth, type NatsServerTls } from './internal-access';

export interface NatsServerHandle {
  url: string;
  port: number;
  pid: number;
  storeDir: string;
  /**
   * The operator's credentials (every permission), for a test's own connections:
   * `connect({ servers: nats.url, ...nats.auth })`, `connectNats({ url: nats.url, name, ...nats.auth })`.
   * Processes started by startService / startGateway get their own user without asking.
   */
  auth: { user: string; pass: string };
  /** The server's log lines about refused publishes and subscriptions (a permission test's evidence). */
  permissionViolations(): string[];
  stop(): Promise<void>;
}

const INSTALL_HINT = 'nats-server not found: apt-get install -y nats-server';
const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/** Where nats-server is looked for: $NATS_SERVER_BIN, the Debian and usual locations, then $PATH. */
export function natsServerCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates: string[] = [];
  if (env.NATS_SERVER_BIN) candidates.push(env.NATS_SERVER_BIN);
  candidates.push('/usr/sbin/nats-server', '/usr/local/bin/nats-server', '/usr/bin/nats-server');
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir) candidates.push(path.join(dir, 'nats-server'));
  }
  return candidates;
}

/** The first executable nats-server among `candidates`; throws an install hint when there is none. */
export function natsServerBinary(candidates: string[] = natsServerCandidates()): string {
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here; try the next location
    }
  }
  throw new Error(INSTALL_HINT);
}

/**
 * A loopback port that was free a moment ago, drawn at random below Linux's ephemeral range
 * (32768-60999): a port the kernel picks for listen(0) can be taken by the next outgoing
 * connection's local end before the process we hand it to binds it (a CI run failed so). The window
 * between probe and bind remains; startNatsServer and startService retry on a bind failure.
 */
// Ports are handed out below the kernel's ephemeral range (32768+), so no outgoing connection takes
// one between the pick and the bind. Each jest worker picks from a slice of its own, so two workers
// never pick the same port, and a port handed out once is not handed out again by this process: the
// stacks pick every address before any process binds it.
const PORT_BASE = 20_000;
const PORT_SPAN = 12_000;
const SLICES = 4;
const handedOut = new Set<number>();

function portSlice(): { from: number; size: number } {
  const worker = Number(process.env.JEST_WORKER_ID);
  if (!Number.isInteger(worker) || worker < 1) return { from: PORT_BASE, size: PORT_SPAN };
  const size = PORT_SPAN / SLICES;
  return { from: PORT_BASE + ((worker - 1) % SLICES) * size, size };
}

export async function freePort(): Promise<number> {
  const { from, size } = portSlice();
  for (let attempt = 0; ; attempt++) {
    const port = from + crypto.randomInt(size);
    if (!handedOut.has(port) && (await canListen(port))) {
      handedOut.add(port);
      return port;
    }
    if (attempt > 100) throw new Error(`could not find a free port in ${from}-${from + size - 1}`);
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

// Servers still running when the test process exits are killed synchronously (exit handlers cannot
// await), so a crashed or interrupted jest worker does not leave orphan nats-servers holding ports.
const running = new Map<number, { child: ChildProcess; tempDir?: string }>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const [pid, entry] of running) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      if (entry.tempDir) fs.rmSync(entry.tempDir, { recursive: true, force: true });
    }
    running.clear();
  });
  // Signals would otherwise terminate without running 'exit' handlers. Only install when nobody else
  // handles them, and re-raise the default behaviour by exiting with the conventional code.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    if (process.listenerCount(sig) === 0) {
      process.once(sig, () => process.exit(128 + (sig === 'SIGINT' ? 2 : 15)));
    }
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.removeAllListeners();
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    // nats-server greets every client with an INFO line; seeing it means the server is serving,
    // not merely that something accepted a TCP connection.
    sock.once('data', (buf) => done(buf.toString('utf8').startsWith('INFO')));
    sock.once('error', () => done(false));
  });
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (await waitForExit(child, STOP_GRACE_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, STOP_GRACE_MS);
}

async function startOnce(
  bin: string,
  storeDir: string,
  configFile: string,
  fixedPort: number | undefined,
): Promise<{ ok: true; handle: Pick<NatsServerHandle, 'url' | 'port' | 'pid' | 'permissionViolations'>; child: ChildProcess } | { ok: false; portInUse: boolean; message: string }> {
  const port = fixedPort ?? (await freePort());
  const args = ['-c', configFile, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // nats-server logs to stderr; keep a bounded tail for the failure message.
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (spawnError) break;
    if (child.exitCode !== null || child.signalCode !== null) break;
    // "Server is ready" comes from our own child, so another process answering on a fixed port is not
    // mistaken for it; the INFO greeting then proves clients are actually served.
    if (/Server is ready/.test(output) && (await canConnect(port))) {
      // Stop buffering output once up (the pipes must still be drained or the server could block);
      // only permission violations are kept.
      child.stdout!.off('data', collect);
      child.stderr!.off('data', collect);
      const violations: string[] = [];
      const keepViolations = (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (!/Violation/.test(line)) continue;
          if (violations.length < 1000) violations.push(line);
          if (process.env.NATS_PRINT_VIOLATIONS) process.stderr.write(`nats-server: ${line}\n`);
        }
      };
      child.stdout!.on('data', keepViolations);
      child.stderr!.on('data', keepViolations);
      return { ok: true, handle: { url: `nats://127.0.0.1:${port}`, port, pid: child.pid!, permissionViolations: () => [...violations] }, child };
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  await killChild(child);
  const portInUse = /address already in use/i.test(output);
  const reason = spawnError
    ? `spawn failed: ${spawnError.message}`
    : child.exitCode !== null || child.signalCode !== null
      ? `exited (code ${child.exitCode}, signal ${child.signalCode})`
      : `did not accept connections within ${START_TIMEOUT_MS} ms`;
  return {
    ok: false,
    portInUse,
    message: `nats-server ${args.join(' ')} ${reason}\n--- nats-server output ---\n${output || '(none)'}`,
  };
}

export interface StartNatsServerOptions {
  /** Caller-owned JetStream directory (e.g. to restart a server over the same data); default: a temp dir removed by stop(). */
  storeDir?: string;
  /** Fixed port, for tests that must know it before the server runs (connect retries, restarts); default: a free one. */
  port?: number;
  /** Serve TLS with this certificate (and require client certificates signed by caFile when given). */
  tls?: NatsServerTls;
}

/**
 * Starts a JetStream-enabled nats-server on loopback and resolves once it serves clients. It runs
 * with authorization: one user per process with that process's permissions (internal-access.ts) and
 * the operator user (`auth`); clients without credentials are refused.
 */
export async function startNatsServer(opts: StartNatsServerOptions = {}): Promise<NatsServerHandle> {
  const bin = natsServerBinary();
  installExitHandler();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-test-'));
  const storeDir = opts.storeDir ?? path.join(tempDir, 'store');
  fs.mkdirSync(storeDir, { recursive: true });
  // The configuration holds passwords: readable by this user only.
  const configFile = path.join(tempDir, 'nats.conf');
  fs.writeFileSync(configFile, natsServerConfig(harnessCredentials.natsPassword, opts.tls), { mode: 0o600 });

  let last = '';
  // A port taken between freePort() and the server's bind is retried with a fresh port; any other
  // failure is reported at once.
  for (let attempt = 0; attempt < 3; attempt++) {
    const res = await startOnce(bin, storeDir, configFile, opts.port);
    if (res.ok) {
      const { child, handle } = res;
      running.set(handle.pid, { child, tempDir });
      let stopped: Promise<void> | undefined;
      return {
        ...handle,
        ...(opts.tls ? { url: handle.url.replace(/^nats:/, 'tls:') } : {}),
        storeDir,
        auth: operatorAuth,
        stop() {
          stopped ??= (async () => {
            await killChild(child);
            running.delete(handle.pid);
            fs.rmSync(tempDir, { recursive: true, force: true });
          })();
          return stopped;
        },
      };
    }
    last = res.message;
    // A fixed port taken by someone else will not free itself: report it rather than retry.
    if (!res.portInUse || opts.port !== undefined) break;
  }
  fs.rmSync(tempDir, { recursive: true, force: true });
  throw new Error(last);
}
