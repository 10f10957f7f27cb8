import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, expectError, event, startStack, type Stack } from './support/harness';

const repoRoot = path.resolve(__dirname, '..', '..');
const cliPath = path.join(repoRoot, 'scripts', 'admin.js');

let stack: Stack;
let gw: Stack['gateways'][number];

beforeAll(async () => {
  stack = await startStack(1);
  gw = stack.gateways[0];
});
afterAll(() => stack.stop());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function run(args: string[], env: NodeJS.ProcessEnv = { ADMIN_URL: gw.adminUrl, ADMIN_TOKEN: gw.adminToken }, script = cliPath, cmd = process.execPath): Promise<Run> {
  const clean = { ...process.env };
  delete clean.ADMIN_URL;
  delete clean.ADMIN_TOKEN;
  return new Promise((resolve) => {
    execFile(cmd, cmd === process.execPath ? [script, ...args] : args, { env: { ...clean, ...env }, cwd: repoRoot }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      let json: unknown;
      try {
        json = JSON.parse((code === 0 ? stdout : stderr.split('\n').filter((l) => l.startsWith('{')).pop()) ?? '');
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

describe('operator CLI (scripts/admin.js)', () => {
  it('create-account prints {accountId, apiKey} JSON; the key works', async () => {
    const r = await run(['create-account', '--name', 'Acme']);
    expect(r.code).toBe(0);
    expect(Object.keys(r.json).sort()).toEqual(['accountId', 'apiKey']);
    expect(r.stdout.trim()).toBe(JSON.stringify(r.json));
    expect((await call(gw, 'POST', '/events', { apiKey: r.json.apiKey, body: event() })).status).toBe(202);
  });

  it('works through `npm run --silent admin --`', async () => {
    const r = await run(['run', '--silent', 'admin', '--', 'create-account', '--name', 'Via npm'], undefined, undefined, 'npm');
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ accountId: expect.any(String), apiKey: expect.stringMatching(/^mk_/) });
  });

  it('show-key, create-key, rotate-key, delete-key, set-limits, get-limits', async () => {
    const { accountId, apiKey } = (await run(['create-account', '--name', 'Lifecycle'])).json;
    expect((await run(['show-key', '--account', accountId])).json).toEqual({ accountId, apiKey });
    expect((await run(['create-key', '--account', accountId])).json).toEqual({ accountId, apiKey });

    const rotated = (await run(['rotate-key', '--account', accountId])).json;
    expect(rotated.accountId).toBe(accountId);
    expect(rotated.apiKey).not.toBe(apiKey);
    expectError(await call(gw, 'POST', '/events', { apiKey, body: event() }), 401, 'api_key_invalid');

    const limits = await run(['set-limits', '--account', accountId, '--per-minute', '7', '--events-burst=9']);
    expect(limits.code).toBe(0);
    expect(limits.json).toMatchObject({ perMinute: 7, perHour: 2000, eventsPerSecond: 100, eventsBurst: 9 });
    expect((await run(['get-limits', '--account', accountId])).json).toMatchObject({ perMinute: 7, eventsBurst: 9 });
    const res = await call(gw, 'GET', '/account/api-key', { apiKey: rotated.apiKey });
    expect(res.headers.get('ratelimit-policy')).toBe('7;w=60, 2000;w=3600');

    expect((await run(['delete-key', '--account', accountId])).json).toEqual({ accountId, deleted: true });
    expectError(await call(gw, 'POST', '/events', { apiKey: rotated.apiKey, body: event() }), 401, 'api_key_invalid');
    const show = await run(['show-key', '--account', accountId]);
    expect([show.code, show.json.errorId]).toEqual([1, 'api_key_not_found']);
  });

  it('errors: JSON on stderr, exit 1', async () => {
    const cases: Array<[string[], NodeJS.ProcessEnv | undefined, string]> = [
      [['create-account'], undefined, 'usage'],
      [['create-account', '--name'], undefined, 'usage'],
      [['frobnicate'], undefined, 'usage'],
      [[], undefined, 'usage'],
      [['set-limits', '--account', '00000000-0000-4000-8000-000000000000'], undefined, 'usage'],
      [['set-limits', '--account', 'x', '--per-minute', '-1'], undefined, 'usage'],
      [['show-key', '--account', '00000000-0000-4000-8000-000000000000'], undefined, 'account_not_found'],
      [['show-key', '--account', 'nope'], undefined, 'invalid_uuid'],
      [['create-account', '--name', 'x'], { ADMIN_URL: gw.adminUrl, ADMIN_TOKEN: 'wrong'.repeat(8) }, 'admin_token_invalid'],
      [['create-account', '--name', 'x'], { ADMIN_URL: 'http://127.0.0.1:1', ADMIN_TOKEN: 'x' }, 'admin_unreachable'],
    ];
    for (const [args, env, errorId] of cases) {
      const r = await run(args, env);
      expect([args.join(' '), r.code, r.json?.errorId]).toEqual([args.join(' '), 1, errorId]);
      expect(r.stdout).toBe('');
    }
  });

  it('falls back to .data/admin.json next to the scripts directory', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
    try {
      fs.mkdirSync(path.join(dir, 'scripts'));
      fs.mkdirSync(path.join(dir, '.data'));
      fs.copyFileSync(cliPath, path.join(dir, 'scripts', 'admin.js'));
      const script = path.join(dir, 'scripts', 'admin.js');
      const missing = await run(['create-account', '--name', 'x'], {}, script);
      expect([missing.code, missing.json.errorId]).toEqual([1, 'config']);
      fs.writeFileSync(path.join(dir, '.data', 'admin.json'), JSON.stringify({ adminUrl: gw.adminUrl, adminToken: gw.adminToken }));
      const r = await run(['create-account', '--name', 'From file'], {}, script);
      expect(r.code).toBe(0);
      expect(r.json.apiKey).toMatch(/^mk_/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
