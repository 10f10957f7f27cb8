// Every service process keeps its files to its own user: the data directory 0700, files 0600, also
// when the directory was left with wider modes by an older version (narrowed at start).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startNatsServer, startService, type NatsServerHandle } from '@mailer/testing';

let nats: NatsServerHandle;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-modes-'));

beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Every path under `dir` (itself included): `dir 755`, `file 644`. */
function modes(dir: string): Record<string, string> {
  const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
  const out: Record<string, string> = { [path.relative(dataDir, dir) || '.']: `dir ${mode(dir)}` };
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, modes(p));
    else out[path.relative(dataDir, p)] = `file ${mode(p)}`;
  }
  return out;
}
const ownerOnly = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([p, kind]) => [p, kind.startsWith('dir') ? 'dir 700' : 'file 600']));

it('a service creates its data 0700 / 0600, and narrows a data directory an older version left 0755 / 0644', async () => {
  fs.chmodSync(dataDir, 0o755);
  let webhook = await startService('webhook', { NATS_URL: nats.url, DATA_DIR: dataDir });
  const fresh = modes(dataDir);
  await webhook.stop();
  expect(Object.keys(fresh).length).toBeGreaterThan(2); // the directory, the service's own, its store files
  expect(fresh).toEqual(ownerOnly(fresh));

  // As an older version left it: everything readable by everyone.
  const left = modes(dataDir);
  for (const [p, kind] of Object.entries(left)) fs.chmodSync(path.join(dataDir, p), kind.startsWith('dir') ? 0o755 : 0o644);
  webhook = await startService('webhook', { NATS_URL: nats.url, DATA_DIR: dataDir });
  const narrowed = modes(dataDir);
  await webhook.stop();
  expect(narrowed).toEqual(ownerOnly(narrowed));
});
