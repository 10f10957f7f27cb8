// `npm run up`'s runner (scripts/run-local.js, after the build): nats-server, maildev (without
// SMTP_URL), all six services and the gateway as separate processes; a development account whose
// key it prints and writes; data kept across restarts; Ctrl-C / SIGTERM stops every child. With
// SMTP_URL and other section 4 settings in its environment, those reach the services as given.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childrenOf, freePort, repoRoot } from '@mailer/testing';

interface Run {
  child: ChildProcess;
  output: () => string;
  url: string;
  apiKey: string;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-up-'));
let natsPort: number;
let gatewayPort: number;
const runs: ChildProcess[] = [];

beforeAll(async () => {
  natsPort = await freePort();
  gatewayPort = await freePort();
});

afterAll(() => {
  for (const child of runs) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function up(settings: NodeJS.ProcessEnv = {}): Promise<Run> {
  const { SMTP_URL: _relay, ...outer } = process.env;
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/run-local.js')], {
    env: { ...outer, ...settings, MAILER_DATA_DIR: dataDir, NATS_PORT: String(natsPort), GATEWAY_PORT: String(gatewayPort), ADMIN_PORT: '0', GRPC_BASE_PORT: '0', METRICS_BASE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  runs.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 45_000;
  while (!out.includes('API key:')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`runner did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = out.match(/gateway:\s+(http:\/\/\S+)/)![1];
  const apiKey = out.match(/API key:\s+(\S+)/)![1];
  return { child, output: () => out, url, apiKey };
}

/** The environment of the runner's child whose command line contains `needle`. */
function envOf(run: Run, needle: string): Record<string, string> {
  const pid = childrenOf(run.child.pid!).find((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(needle))!;
  const pairs = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
}
const commands = (run: Run) => childrenOf(run.child.pid!).map((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' '));

async function stop(run: Run, signal: NodeJS.Signals, expected: number): Promise<void> {
  const children = childrenOf(run.child.pid!);
  expect(children.length).toBe(expected);
  run.child.kill(signal);
  await new Promise((r) => run.child.once('exit', r));
  for (const pid of children) expect(fs.existsSync(`/proc/${pid}`) && !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')).toBe(false);
}

it('brings the system up with maildev, prints a working key and the mail UI, keeps the data across a restart (then with a relay: no maildev, settings as given), stops every child', async () => {
  const first = await up();
  expect(first.url).toBe(`http://127.0.0.1:${gatewayPort}`);
  expect(fs.readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8')).toBe(first.apiKey);
  const headers = { 'x-api-key': first.apiKey, 'content-type': 'application/json' };
  const created = await fetch(`${first.url}/subscribers`, { method: 'POST', headers, body: JSON.stringify({ email: 'kept@example.org' }) });
  expect(created.status).toBe(201);
  const { id } = await created.json();
  expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
  // no SMTP_URL: maildev (on the default ports or the next free ones), shown beside the key
  const ui = first.output().match(/\n {2}mail UI:\s+(http:\/\/127\.0\.0\.1:\d+)/)![1];
  expect((await fetch(ui, { headers: { accept: 'text/html' } })).status).toBe(200);
  expect(commands(first).filter((c) => c.includes('maildev'))).toHaveLength(1);
  await stop(first, 'SIGINT', 9); // nats-server, maildev, six services, the gateway
  // What every process wrote (nats, maildev, the stores, the logs, the runner's files) is the user's own.
  const wider = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      const open = (fs.statSync(p).mode & 0o077) !== 0 ? [`${p} ${(fs.statSync(p).mode & 0o777).toString(8)}`] : [];
      return e.isDirectory() ? [...open, ...wider(p)] : open;
    });
  expect([...((fs.statSync(dataDir).mode & 0o077) !== 0 ? [dataDir] : []), ...wider(dataDir)]).toEqual([]);

  // A relay given (with credentials) and other settings (docs/configuration.md): no maildev; each
  // setting reaches its reader as given; the password is never printed.
  const relay = `smtp://mailer:s3cret-pass@127.0.0.1:${await freePort()}`;
  const given = { SMTP_URL: relay, PUBLIC_BASE_URL: 'https://mail.example.org', BOUNCE_DOMAIN: 'bounce.example.org', MAIL_DELIVERY_CONFIRMATION: 'dsn', TRACKING_SECRET: 'x'.repeat(40), RSS_POLL_INTERVAL_SECONDS: '60', OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOWED_CIDRS: '', MAIL_DOMAIN_VERIFICATION: 'required', DNS_SERVERS: '127.0.0.1:5353' };
  const second = await up(given);
  expect(commands(second).filter((c) => c.includes('maildev'))).toEqual([]);
  expect(envOf(second, 'messaging/dist')).toMatchObject({ SMTP_URL: relay, PUBLIC_BASE_URL: 'https://mail.example.org', BOUNCE_DOMAIN: 'bounce.example.org', MAIL_DELIVERY_CONFIRMATION: 'dsn', TRACKING_SECRET: 'x'.repeat(40), MAIL_DOMAIN_VERIFICATION: 'required', DNS_SERVERS: '127.0.0.1:5353' });
  expect(envOf(second, 'form/dist')).toMatchObject({ PUBLIC_BASE_URL: 'https://mail.example.org', TRACKING_SECRET: 'x'.repeat(40) });
  expect(envOf(second, 'rss/dist')).toMatchObject({ RSS_POLL_INTERVAL_SECONDS: '60', OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOWED_CIDRS: '' });
  expect(second.output()).toContain(`mail:     sent through ${relay.replace('mailer:s3cret-pass@', '')} (SMTP_URL; no local mail UI)`);
  expect(second.output()).not.toContain('s3cret-pass');
  expect(second.output()).not.toContain('mail UI:');
  expect(second.output()).not.toContain('warning:'); // no outbound exception, domain verification required

  expect(second.apiKey).toBe(first.apiKey);
  const again = await fetch(`${second.url}/subscribers/${id}`, { headers: { 'x-api-key': second.apiKey } });
  expect(again.status).toBe(200);
  expect(await again.json()).toMatchObject({ id, email: 'kept@example.org' });
  await stop(second, 'SIGTERM', 8);
  // Each process wrote its log; no key, relay password or tracking secret in any of them.
  for (const log of fs.readdirSync(path.join(dataDir, 'logs'))) {
    const text = fs.readFileSync(path.join(dataDir, 'logs', log), 'utf8');
    for (const secret of [first.apiKey, 's3cret-pass', 'x'.repeat(40)]) expect({ log, leaked: text.includes(secret) }).toEqual({ log, leaked: false });
  }
}, 120_000);

it('a mail port that is not a port number stops the start with the cause, before anything runs', async () => {
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-up-bad-'));
  try {
    const { SMTP_URL: _relay, ...outer } = process.env;
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/run-local.js')], {
      env: { ...outer, MAILER_DATA_DIR: elsewhere, NATS_PORT: '0', GATEWAY_PORT: '0', ADMIN_PORT: '0', GRPC_BASE_PORT: '0', METRICS_BASE_PORT: '0', MAIL_UI_PORT: '10x80' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(out.trim()).toBe('up: MAIL_UI_PORT must be a port number (0 = any free port), not "10x80"');
    expect(fs.readdirSync(path.join(elsewhere, 'logs'))).toEqual([]); // nothing was started
  } finally {
    fs.rmSync(elsewhere, { recursive: true, force: true });
  }
}, 30_000);
