// The local runner (scripts/run-local.js, what `npm run up` ends with) on non-default ports and a
// temporary data directory: services reach each other (not only the gateway), the printed operator
// command works, a second runner on the same data is refused, every listener is on loopback, a
// killed service is restarted, SIGTERM stops every child.
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childrenOf, freePort, repoRoot } from '@mailer/testing';

interface Runner {
  child: ChildProcess;
  output: () => string;
  url: string;
  apiKey: string;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-runner-'));
const runners: ChildProcess[] = [];
let env: NodeJS.ProcessEnv;
let runner: Runner;

/** The runner's environment: no INIT_CWD (npm's), so paths it prints are relative to its cwd. */
async function runnerEnv(): Promise<NodeJS.ProcessEnv> {
  const { INIT_CWD: _ignored, ...rest } = process.env;
  return {
    ...rest,
    MAILER_DATA_DIR: dataDir,
    NATS_PORT: String(await freePort()),
    GATEWAY_PORT: String(await freePort()),
    ADMIN_PORT: '0',
    GRPC_BASE_PORT: '0',
    METRICS_BASE_PORT: '0',
  };
}

/** Starts a runner in its own process group (so cleanup can kill it and every child at once). */
function spawnRunner(): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/run-local.js')], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  runners.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return { child, output: () => out };
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, context = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function up(): Promise<Runner> {
  const { child, output } = spawnRunner();
  await until('the runner to print its API key', () => {
    if (child.exitCode !== null) throw new Error(`runner exited:\n${output()}`);
    return output().includes('API key:') || undefined;
  }, 120_000, output);
  const url = output().match(/gateway:\s+(http:\/\/\S+)/)![1];
  const apiKey = output().match(/API key:\s+(\S+)/)![1];
  return { child, output, url, apiKey };
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`) && !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));

/** The runner's child running `services/<name>/dist/main.js` (or nats-server). */
function pidOf(runnerPid: number, name: string): number | undefined {
  const needle = name === 'nats' ? 'nats-server' : `${name}/dist/main.js`;
  return childrenOf(runnerPid).find((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
}

/** Listening TCP sockets of a process, as "address:port" (from /proc/<pid>/fd and /proc/net/tcp{,6}). */
function listenersOf(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {}
  }
  const out: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] !== '0A' || !inodes.has(cols[9])) continue; // 0A: LISTEN
      const [hex, port] = cols[1].split(':');
      const address = hex.length === 8 ? hex.match(/../g)!.reverse().map((b) => parseInt(b, 16)).join('.') : `[${hex}]`;
      out.push(`${address}:${parseInt(port, 16)}`);
    }
  }
  return out;
}

const call = (path_: string, init: RequestInit = {}) =>
  fetch(`${runner.url}${path_}`, { ...init, headers: { 'x-api-key': runner.apiKey, 'content-type': 'application/json', ...init.headers }, signal: AbortSignal.timeout(15_000) });
async function json(res: Response, status: number): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

beforeAll(async () => {
  env = await runnerEnv();
  // a lock left by a runner that died (kill -9): stale, taken over
  const dead = spawnSync('true').pid;
  fs.writeFileSync(path.join(dataDir, 'runner.lock'), `${dead}\n`);
  runner = await up();
  expect(fs.readFileSync(path.join(dataDir, 'runner.lock'), 'utf8').trim()).toBe(String(runner.child.pid));
}, 150_000);

afterAll(() => {
  // Every runner was started in its own process group: this reaches its children even if the
  // runner itself died or a test failed half-way.
  for (const child of runners) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

let segmentId: string;
let memberId: string;

it('services reach each other on any ports: subscribers by segment (gateway -> subscriber -> segment), field archive (subscriber asks every peer)', async () => {
  memberId = (await json(await call('/subscribers', { method: 'POST', body: JSON.stringify({ email: 'ann@example.org', firstName: 'Ann' }) }), 201)).id;
  await json(await call('/subscribers', { method: 'POST', body: JSON.stringify({ email: 'bob@example.org', firstName: 'Bob' }) }), 201);
  const expression = { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'a' } }] }] };
  segmentId = (await json(await call('/segments', { method: 'POST', body: JSON.stringify({ name: 'A*', expression }) }), 201)).id;
  const members = await json(await call(`/subscribers?segmentId=${segmentId}`), 200);
  expect(members.items.map((s: { id: string }) => s.id)).toEqual([memberId]);

  const field = await json(await call('/fields', { method: 'POST', body: JSON.stringify({ label: 'Score', fieldType: 'NUMBER' }) }), 201);
  const usage = await json(await call(`/fields/${field.fieldId}/usage`), 200);
  expect(usage.sources).toEqual(expect.arrayContaining(['segment', 'form', 'rss', 'messaging'].map((service) => ({ service, answered: true }))));
  expect((await json(await call(`/fields/${field.fieldId}/archive`, { method: 'POST' }), 200)).active).toBe(false);
}, 60_000);

it('the printed operator command works as printed, though the data is not in .data/', () => {
  const line = runner.output().match(/operator:\s+(.+)/)![1];
  expect(line).toContain(`MAILER_DATA_DIR=${dataDir}`);
  // a fresh shell at the repository root: nothing of the runner's environment
  const { MAILER_DATA_DIR: _d, ADMIN_URL: _u, ADMIN_TOKEN: _t, INIT_CWD: _c, ...shellEnv } = process.env;
  const out = execFileSync('bash', ['-c', line], { cwd: repoRoot, env: shellEnv, encoding: 'utf8', timeout: 60_000 });
  expect(JSON.parse(out)).toEqual({ accountId: fs.readFileSync(path.join(dataDir, 'dev-account-id'), 'utf8'), apiKey: runner.apiKey });
}, 90_000);

it('a second runner on the same data directory is refused at once, before it starts anything', async () => {
  const natsLog = path.join(dataDir, 'logs', 'nats.log');
  const natsStarts = () => fs.readFileSync(natsLog, 'utf8').split('Starting nats-server').length - 1;
  expect(natsStarts()).toBe(1);
  const logs = () => fs.readdirSync(path.join(dataDir, 'logs')).sort();
  const logsBefore = logs();
  const second = spawnRunner();
  const code = await new Promise<number | null>((resolve) => second.child.once('exit', resolve));
  expect(code).toBe(1);
  expect(second.output()).toContain(`up: another runner (pid ${runner.child.pid}) is using ${dataDir}`);
  expect(second.output().trim().split('\n')).toHaveLength(1); // the cause, not stale log lines
  // nothing was started on the data: no second nats-server on the JetStream store, no new log
  expect(natsStarts()).toBe(1);
  expect(logs()).toEqual(logsBefore);
  expect(fs.readFileSync(path.join(dataDir, 'runner.lock'), 'utf8').trim()).toBe(String(runner.child.pid));
  expect((await call('/subscribers')).status).toBe(200);

  // `npm run up` (scripts/up.sh) refuses before it installs and builds
  const viaUp = spawnSync('bash', ['scripts/up.sh'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 30_000 });
  expect(viaUp.status).toBe(1);
  expect(viaUp.stdout + viaUp.stderr).toBe(`up: another runner (pid ${runner.child.pid}) is using ${dataDir}; stop it first (Ctrl-C in its terminal, or kill ${runner.child.pid}), or set MAILER_DATA_DIR to another directory\n`);
  expect(natsStarts()).toBe(1);
}, 60_000);

it('every process listens on loopback only: gateway, admin, /metrics, gRPC, NATS', () => {
  const children = childrenOf(runner.child.pid!);
  expect(children).toHaveLength(8); // nats-server, six services, the gateway
  const listeners = Object.fromEntries(children.map((pid) => [fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(), listenersOf(pid)]));
  for (const [command, addresses] of Object.entries(listeners)) {
    expect({ command, listening: addresses.length > 0 }).toEqual({ command, listening: true });
    for (const address of addresses) expect({ command, address }).toEqual({ command, address: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
  }
  // the gateway: public, admin and /metrics listeners
  const gateway = Object.entries(listeners).find(([command]) => command.includes('gateway/dist/main.js'))![1];
  expect(gateway).toHaveLength(3);
  expect(gateway).toContain(new URL(runner.url).host);
});

it('a service killed with SIGKILL is restarted on the same address with backoff, says so with the cause, and answers again', async () => {
  const runnerPid = runner.child.pid!;
  const gatewayPid = pidOf(runnerPid, 'gateway')!;
  const subscriberLog = path.join(dataDir, 'logs', 'subscriber.log');
  const killed = pidOf(runnerPid, 'subscriber')!;
  expect(killed).toBeDefined();
  process.kill(killed, 'SIGKILL');
  await until('the runner to report the restart', () => runner.output().includes(`up: subscriber (pid ${killed}) exited (SIGKILL); restarting it in 1 s (restart 1)`) || undefined, 30_000, runner.output);
  // the cause on the console (the last lines of its log), and the restart in its log
  expect(runner.output()).toMatch(/Last lines of \S*subscriber\.log:\n {2}\| [\s\S]*"msg":"ready"/);
  expect(fs.readFileSync(subscriberLog, 'utf8')).toMatch(/\[runner\] \S+ subscriber \(pid \d+\) exited \(SIGKILL\); restarting it in 1 s \(restart 1\)/);
  const restarted = await until('a new subscriber process', () => {
    const pid = pidOf(runnerPid, 'subscriber');
    return pid !== undefined && pid !== killed ? pid : undefined;
  }, 30_000, runner.output);
  await until('the runner to report it ready', () => runner.output().includes(`up: subscriber is ready again (pid ${restarted})`) || undefined, 60_000, runner.output);

  // dying again right after: the delay doubles
  process.kill(restarted, 'SIGKILL');
  await until('the second restart', () => runner.output().includes(`up: subscriber (pid ${restarted}) exited (SIGKILL); restarting it in 2 s (restart 2)`) || undefined, 30_000, runner.output);
  const third = await until('a third subscriber process', () => {
    const pid = pidOf(runnerPid, 'subscriber');
    return pid !== undefined && pid !== restarted ? pid : undefined;
  }, 30_000, runner.output);

  // same address: the gateway (not restarted) and the segment service reach it again
  await until('subscribers by segment to answer again', async () => ((await call(`/subscribers?segmentId=${segmentId}`)).status === 200 ? true : undefined), 90_000, runner.output);
  const members = await json(await call(`/subscribers?segmentId=${segmentId}`), 200);
  expect(members.items.map((s: { id: string }) => s.id)).toEqual([memberId]);
  expect(pidOf(runnerPid, 'gateway')).toBe(gatewayPid);
  expect(pidOf(runnerPid, 'subscriber')).toBe(third);
}, 240_000);

it('SIGTERM stops every child (by PID), removes the lock, exits 0', async () => {
  const children = childrenOf(runner.child.pid!);
  expect(children).toHaveLength(8);
  const exited = new Promise<number | null>((resolve) => runner.child.once('exit', resolve));
  runner.child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(children.filter(alive)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'runner.lock'))).toBe(false);
  expect(runner.output()).not.toMatch(/exited \((SIGTERM|exit code 0)\); restarting/); // stopping is not dying
}, 60_000);
