// `npm run up`'s runner (scripts/run-local.js, after the build): nats-server, all six services and
// the gateway as separate processes; a development account whose key it prints and writes; data kept
// across restarts; Ctrl-C / SIGTERM stops every child.
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

async function up(): Promise<Run> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/run-local.js')], {
    env: { ...process.env, MAILER_DATA_DIR: dataDir, NATS_PORT: String(natsPort), GATEWAY_PORT: String(gatewayPort), ADMIN_PORT: '0', GRPC_BASE_PORT: '0', METRICS_BASE_PORT: '0' },
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

async function stop(run: Run, signal: NodeJS.Signals): Promise<void> {
  const children = childrenOf(run.child.pid!);
  expect(children.length).toBe(8); // nats-server, six services, the gateway
  run.child.kill(signal);
  await new Promise((r) => run.child.once('exit', r));
  for (const pid of children) expect(fs.existsSync(`/proc/${pid}`) && !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')).toBe(false);
}

it('brings the system up, prints a working key, keeps the data across a restart, stops every child', async () => {
  const first = await up();
  expect(first.url).toBe(`http://127.0.0.1:${gatewayPort}`);
  expect(fs.readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8')).toBe(first.apiKey);
  const headers = { 'x-api-key': first.apiKey, 'content-type': 'application/json' };
  const created = await fetch(`${first.url}/subscribers`, { method: 'POST', headers, body: JSON.stringify({ email: 'kept@example.org' }) });
  expect(created.status).toBe(201);
  const { id } = await created.json();
  expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
  await stop(first, 'SIGINT');

  const second = await up();
  expect(second.apiKey).toBe(first.apiKey);
  const again = await fetch(`${second.url}/subscribers/${id}`, { headers: { 'x-api-key': second.apiKey } });
  expect(again.status).toBe(200);
  expect(await again.json()).toMatchObject({ id, email: 'kept@example.org' });
  await stop(second, 'SIGTERM');
  // Each process wrote its log; no key in any of them.
  for (const log of fs.readdirSync(path.join(dataDir, 'logs'))) {
    expect(fs.readFileSync(path.join(dataDir, 'logs', log), 'utf8')).not.toContain(first.apiKey);
  }
}, 120_000);
