// A real headless Chromium for tests of reader pages (landing pages, confirmation, preferences, /docs):
// the Debian package, driven by playwright-core (no browser download of its own). Like nats-server, a
// missing browser is installed when this process may (root with apt-get), otherwise a loud failure
// that says what to run: never a skipped test.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions } from 'playwright-core';

/** Where Chromium is looked for: $CHROMIUM_BIN, the Debian locations, then $PATH. */
export function chromiumCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates: string[] = [];
  if (env.CHROMIUM_BIN) candidates.push(env.CHROMIUM_BIN);
  candidates.push('/usr/bin/chromium', '/usr/bin/chromium-browser');
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir) candidates.push(path.join(dir, 'chromium'), path.join(dir, 'chromium-browser'));
  }
  return candidates;
}

/** The first executable Chromium among `candidates`, or null. */
export function findChromium(candidates: string[] = chromiumCandidates()): string | null {
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here; try the next location
    }
  }
  return null;
}

const INSTALL_HINT = 'install the Debian package with `sudo apt-get install -y chromium` (npm test does it when run as root)';

/**
 * A Chromium binary, installing the Debian package when there is none and this process runs as root
 * with apt-get (`apt-get update` then `apt-get install -y chromium`). Throws with the reason when it
 * cannot: not root, no apt-get, or the install failed (its output is in the message).
 */
export interface EnsureChromiumOptions {
  /** Default chromiumCandidates(). */
  candidates?: string[];
  /** Default this process's uid. */
  uid?: number;
  /** Default /usr/bin/apt-get (or /bin/apt-get) when present. */
  aptGet?: string;
  log?: (line: string) => void;
}

export function ensureChromium(opts: EnsureChromiumOptions = {}): string {
  const candidates = opts.candidates ?? chromiumCandidates();
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const found = findChromium(candidates);
  if (found) return found;
  const uid = opts.uid ?? (typeof process.getuid === 'function' ? process.getuid() : -1);
  if (uid !== 0) throw new Error(`Chromium not found and not running as root to install it: ${INSTALL_HINT}`);
  const aptGet = opts.aptGet ?? ['/usr/bin/apt-get', '/bin/apt-get'].find((p) => fs.existsSync(p));
  if (!aptGet || !fs.existsSync(aptGet)) throw new Error(`Chromium not found and apt-get is not available to install it: ${INSTALL_HINT}`);
  log('installing chromium from Debian (apt-get update, apt-get install -y chromium)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync(aptGet, ['update', '-qq'], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    execFileSync(aptGet, ['install', '-y', '-qq', 'chromium'], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 900_000 });
  } catch (err) {
    const e = err as { message: string; stderr?: Buffer; stdout?: Buffer };
    const output = `${e.stderr?.toString() ?? ''}${e.stdout?.toString() ?? ''}`.trim().slice(-2_000);
    throw new Error(`installing chromium with apt-get failed: ${e.message}${output ? `\n${output}` : ''}`);
  }
  const installed = findChromium(candidates);
  if (!installed) throw new Error(`apt-get installed chromium but no binary was found at ${candidates.slice(0, 3).join(', ')}`);
  return installed;
}

// On a closed network Chromium's own background connections (updates, sync, field trials) are
// refused and can stall it; none of them is needed to render a local page. --no-sandbox: tests run
// as root in containers, where Chromium's sandbox cannot start.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserOptions extends Pick<BrowserContextOptions, 'javaScriptEnabled' | 'extraHTTPHeaders'> {
  /**
   * Host names this browser resolves to 127.0.0.1 (Chromium's --host-resolver-rules), so a page can
   * be opened under a custom domain (a landing page's `domain`) while the server listens locally.
   */
  localHosts?: string[];
}

export interface BrowserHandle {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * A headless Chromium with a fresh profile (nothing cached from an earlier run), installed first when
 * missing (ensureChromium). JavaScript is on unless `javaScriptEnabled: false`: reader pages must
 * work without it.
 */
export async function openBrowser(opts: BrowserOptions = {}): Promise<BrowserHandle> {
  const executablePath = ensureChromium();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-chromium-'));
  const args = [...CHROMIUM_ARGS];
  if (opts.localHosts?.length) args.push(`--host-resolver-rules=${opts.localHosts.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`);
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      args,
      headless: true,
      timeout: 60_000,
      javaScriptEnabled: opts.javaScriptEnabled,
      extraHTTPHeaders: opts.extraHTTPHeaders,
    });
  } catch (err) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// `node packages/testing/dist/browser.js`: the test setup's way to install Chromium when missing.
if (require.main === module) {
  try {
    const bin = ensureChromium();
    process.stderr.write(`chromium: ${bin}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
