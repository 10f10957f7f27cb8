import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './nats';
import { repoRoot } from './processes';

/** The whole system as `npm run up` runs it (scripts/run-local.js), on free ports and fresh data. */
export interface LocalSystem {
  /** The gateway, as the runner's banner prints it. */
  url: string;
  /** The development account's key the runner printed. */
  apiKey: string;
  /** maildev's web UI (its REST API lists every mail sent: `GET /api/email`). */
  mailUi: string;
  /** The runner's settings (every port moved, MAILER_DATA_DIR): what a shell beside it needs. */
  settings: Record<string, string>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the runner with every port moved to a free one and a temporary data directory, in its
 * own process group, and waits for its banner. `stop` sends SIGTERM (the runner stops its children),
 * then kills the group if anything is left, and removes the data.
 */
export async function startLocalSystem(): Promise<LocalSystem> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-system-'));
  const settings: Record<string, string> = {
    MAILER_DATA_DIR: dataDir,
    GATEWAY_PORT: String(await freePort()),
    NATS_PORT: String(await freePort()),
    ADMIN_PORT: '0',
    GRPC_BASE_PORT: '0',
    METRICS_BASE_PORT: '0',
    MAIL_SMTP_PORT: '0',
    MAIL_UI_PORT: '0',
    BOUNCE_SMTP_PORT: '0',
    MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
    FORM_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
  };
  // No relay (maildev catches the mail) and no npm context (INIT_CWD would move relative paths).
  const { SMTP_URL: _relay, INIT_CWD: _cwd, ...outer } = process.env;
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/run-local.js')], { cwd: repoRoot, env: { ...outer, ...settings }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(child.pid!), 20_000);
      await exited;
      clearTimeout(timer);
    }
    killGroup(child.pid!); // anything the runner left behind
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000; // a loaded machine starts nine processes slowly
  while (!/API key:/.test(out) || !/mail UI:\s+http/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the runner did not come up:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: out.match(/gateway:\s+(http:\/\/\S+)/)![1],
    apiKey: out.match(/API key:\s+(\S+)/)![1],
    mailUi: out.match(/mail UI:\s+(http:\/\/\S+)/)![1],
    settings,
    output: () => out,
    stop,
  };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone
  }
}

/** A mail maildev caught (the members the tests read). */
export interface CaughtMail {
  subject: string;
  to: { address: string }[];
  text?: string;
  html?: string;
}

/** Every mail maildev holds, oldest first. */
export async function caughtMails(mailUi: string): Promise<CaughtMail[]> {
  const res = await fetch(`${mailUi}/api/email`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`maildev answered ${res.status}`);
  return (await res.json()) as CaughtMail[];
}
