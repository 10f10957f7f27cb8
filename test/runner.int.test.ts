// The local runner (scripts/run-local.js, what `npm run up` ends with) on non-default ports and a
// temporary data directory: services reach each other (not only the gateway), the printed operator
// command works, a second runner on the same data is refused, every listener is on loopback, a
// killed service is restarted, SIGTERM stops every child. Without SMTP_URL it runs maildev on the
// ports given (a busy one moves to the next free one) and passes the settings (docs/configuration.md) to its readers.
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
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
// Holds the port given as MAIL_SMTP_PORT, so the runner must move maildev's SMTP to the next free one.
let busy: net.Server;
let busyPort: number;

/** The runner's environment: no INIT_CWD (npm's), so paths it prints are relative to its cwd; no SMTP_URL. */
async function runnerEnv(): Promise<NodeJS.ProcessEnv> {
  const { INIT_CWD: _ignored, SMTP_URL: _relay, ...rest } = process.env;
  return {
    ...rest,
    MAILER_DATA_DIR: dataDir,
    NATS_PORT: String(await freePort()),
    GATEWAY_PORT: String(await freePort()),
    ADMIN_PORT: '0',
    GRPC_BASE_PORT: '0',
    METRICS_BASE_PORT: '0',
    MAIL_SMTP_PORT: String(busyPort),
    MAIL_UI_PORT: String(await freePort()),
    BOUNCE_SMTP_PORT: String(busyPort + 1),
    MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
    FORM_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
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

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
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

/** The runner's child running `services/<name>/dist/main.js` (or nats-server, maildev). */
function pidOf(runnerPid: number, name: string): number | undefined {
  const needle = name === 'nats' ? 'nats-server' : name === 'maildev' ? 'maildev/dist/bin' : `${name}/dist/main.js`;
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
  // A busy port whose next one is free: the bounce listener asks for that next one, where the busy
  // mail catcher's port would move if the runner did not keep it for the setting that names it.
  for (;;) {
    busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as net.AddressInfo).port;
    if (await bindable(busyPort + 1)) break;
    busy.close();
  }
  env = await runnerEnv();
  // a lock left by a runner that died (kill -9): stale, taken over
  const dead = spawnSync('true').pid;
  fs.writeFileSync(path.join(dataDir, 'runner.lock'), `${dead}\n`);
  runner = await up();
  expect(fs.readFileSync(path.join(dataDir, 'runner.lock'), 'utf8').trim()).toBe(String(runner.child.pid));
}, 150_000);

afterAll(() => {
  busy.close();
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

it('every process listens on loopback only: gateway, admin, /metrics, gRPC, NATS, maildev', () => {
  const children = childrenOf(runner.child.pid!);
  expect(children).toHaveLength(9); // nats-server, maildev, six services, the gateway
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

/** The environment a child of the runner was started with. */
function envOf(name: string): Record<string, string> {
  const pid = pidOf(runner.child.pid!, name)!;
  const pairs = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
}

/** One message over plain SMTP (what the messaging service's transport does, without a client library). */
async function sendSmtp(port: number, to: string, subject: string): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  socket.on('data', (c: Buffer) => (buffer += c.toString()));
  const reply = async (code: string) => {
    await until(`SMTP ${code}`, () => (new RegExp(`^${code} `, 'm').test(buffer) ? true : undefined), 10_000, () => buffer);
    buffer = '';
  };
  const say = (line: string) => socket.write(`${line}\r\n`);
  await reply('220');
  say('EHLO runner.test');
  await reply('250');
  for (const [line, code] of [['MAIL FROM:<app@example.org>', '250'], [`RCPT TO:<${to}>`, '250'], ['DATA', '354']]) {
    say(line);
    await reply(code);
  }
  say(`From: app@example.org\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nHello.\r\n.`);
  await reply('250');
  say('QUIT');
  socket.end();
}

it('without SMTP_URL: maildev on the given ports (a busy one moves to the next free), its UI answers and shows mail, the banner prints it, the messaging service is pointed at it', async () => {
  const out = runner.output();
  const [, uiUrl, uiPort, smtpPort] = out.match(/mail UI:\s+(http:\/\/127\.0\.0\.1:(\d+))\s+\(every mail sent lands here; SMTP on 127\.0\.0\.1:(\d+)\)/)!;
  expect(Number(uiPort)).toBe(Number(env.MAIL_UI_PORT));
  expect(Number(smtpPort)).toBeGreaterThan(busyPort + 1); // not the bounce listener's port
  expect(out).toContain(`up: port ${busyPort} (MAIL_SMTP_PORT) is in use; using ${smtpPort}`);
  // the mail line sits beside the gateway URL and the key
  expect(out).toMatch(/gateway:.*\n\s+API key:.*\n\s+mail UI:/);

  const page = await fetch(uiUrl, { headers: { accept: 'text/html' }, signal: AbortSignal.timeout(10_000) });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<title>MailDev</title>');
  await sendSmtp(Number(smtpPort), 'ann@example.org', 'caught by maildev');
  const mails = await (await fetch(`${uiUrl}/api/email`, { signal: AbortSignal.timeout(10_000) })).json();
  expect(mails.map((m: { subject: string }) => m.subject)).toEqual(['caught by maildev']);

  expect(envOf('messaging').SMTP_URL).toBe(`smtp://127.0.0.1:${smtpPort}`);
}, 60_000);

it('every setting of the settings (docs/configuration.md) reaches the process that reads it (runner defaults, moved ports, the generated tracking secret)', () => {
  const { trackingSecret, secretSealingKey } = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  expect(Buffer.from(secretSealingKey, 'base64')).toHaveLength(32);
  expect(envOf('messaging')).toMatchObject({
    PUBLIC_BASE_URL: runner.url,
    BOUNCE_DOMAIN: 'bounces.localhost',
    BOUNCE_SMTP_HOST: '127.0.0.1',
    BOUNCE_SMTP_PORT: env.BOUNCE_SMTP_PORT,
    MAIL_DELIVERY_CONFIRMATION: 'accept',
    TRACKING_SECRET: trackingSecret,
    MESSAGING_HTTP_ADDR: env.MESSAGING_HTTP_ADDR,
    MAIL_DOMAIN_VERIFICATION: 'off',
    SECRET_SEALING_KEY: secretSealingKey,
  });
  expect(envOf('form')).toMatchObject({ PUBLIC_BASE_URL: runner.url, TRACKING_SECRET: trackingSecret, FORM_HTTP_ADDR: env.FORM_HTTP_ADDR });
  const outbound = { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' };
  expect(envOf('rss')).toMatchObject({ ...outbound, RSS_POLL_INTERVAL_SECONDS: '600' });
  expect(envOf('webhook')).toMatchObject(outbound);
  expect(envOf('gateway')).toMatchObject({ MESSAGING_HTTP_ADDR: env.MESSAGING_HTTP_ADDR, FORM_HTTP_ADDR: env.FORM_HTTP_ADDR });
  // the secret goes to its readers only, and never to the console
  expect(envOf('subscriber').TRACKING_SECRET).toBeUndefined();
  expect(envOf('form').SECRET_SEALING_KEY).toBeUndefined();
  expect(runner.output()).not.toContain(trackingSecret);
  expect(runner.output()).not.toContain(secretSealingKey);
  expect(runner.output()).toContain('warning:  MAIL_DOMAIN_VERIFICATION=off: any account may send from (and serve pages on) any domain without proving it owns it (development only)');
  expect(runner.output()).toContain(`bounces:  SMTP on 127.0.0.1:${env.BOUNCE_SMTP_PORT} for return paths @bounces.localhost; links start ${runner.url}`);
  expect(runner.output()).toContain('warning:  OUTBOUND_ALLOW_HTTP=true OUTBOUND_ALLOWED_CIDRS=127.0.0.0/8,::1/128: webhooks and RSS feeds may reach these addresses (development only)');
});

it('internal traffic is authenticated: each process its own NATS user, credentials in 0600 files, nothing unauthenticated gets in', async () => {
  const { natsSecret, internalGrpcSecret } = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  expect(fs.statSync(path.join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
  expect(fs.statSync(path.join(dataDir, 'nats.conf')).mode & 0o777).toBe(0o600);
  for (const name of ['gateway', 'subscriber', 'segment', 'form', 'rss', 'messaging', 'webhook']) {
    const childEnv = envOf(name);
    expect({ name, user: childEnv.NATS_USER, secret: childEnv.INTERNAL_GRPC_SECRET }).toEqual({ name, user: name, secret: internalGrpcSecret });
  }
  expect(envOf('form').NATS_PASSWORD).not.toBe(envOf('messaging').NATS_PASSWORD);
  expect(runner.output()).not.toContain(natsSecret);
  expect(runner.output()).not.toContain(internalGrpcSecret);
  // The runner's NATS refuses a client without credentials...
  const { connect } = await import('nats');
  await expect(connect({ servers: `127.0.0.1:${env.NATS_PORT}`, maxReconnectAttempts: 0 })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  // ...and a service refuses a call without a service token.
  const { credentials, Metadata, status } = await import('@grpc/grpc-js');
  const { subscriberV1 } = await import('@mailer/proto');
  const client = new subscriberV1.SubscriberServiceClient(envOf('gateway').SUBSCRIBER_GRPC_ADDR, credentials.createInsecure());
  const code = await new Promise<number>((resolve) => client.listTags({ accountId: 'a1' }, new Metadata(), (err) => resolve(err ? err.code : 0)));
  client.close();
  expect(status[code]).toBe('UNAUTHENTICATED');
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
  expect(children).toHaveLength(9);
  const exited = new Promise<number | null>((resolve) => runner.child.once('exit', resolve));
  runner.child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(children.filter(alive)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'runner.lock'))).toBe(false);
  expect(runner.output()).not.toMatch(/exited \((SIGTERM|exit code 0)\); restarting/); // stopping is not dying
}, 60_000);
