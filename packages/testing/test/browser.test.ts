// The browser tests' Chromium: found where Debian puts it, installed only by root with apt-get (a
// failed install says why), and a launched browser really renders, with JavaScript off when asked.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ensureChromium, findChromium, openBrowser, type BrowserHandle } from '../src/browser';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-test-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const executable = (name: string, body: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
};

test('finds the first executable candidate, skipping missing and non-executable files', () => {
  const plain = path.join(dir, 'not-executable');
  fs.writeFileSync(plain, '', { mode: 0o644 });
  const bin = executable('chromium', 'exit 0');
  expect(findChromium([path.join(dir, 'missing'), plain, dir, bin])).toBe(bin);
  expect(findChromium([path.join(dir, 'missing')])).toBeNull();
  expect(ensureChromium({ candidates: [bin], uid: 1000 })).toBe(bin);
});

test('without a browser, a non-root process fails with the command to run', () => {
  expect(() => ensureChromium({ candidates: [path.join(dir, 'missing')], uid: 1000 })).toThrow(/not running as root.*apt-get install -y chromium/);
});

test('without apt-get, root fails with the reason', () => {
  expect(() => ensureChromium({ candidates: [path.join(dir, 'missing')], uid: 0, aptGet: path.join(dir, 'no-apt-get') })).toThrow(/apt-get is not available/);
});

test("a failed apt-get install fails loudly with apt-get's own words", () => {
  const calls = path.join(dir, 'calls');
  const aptGet = executable('apt-get', `echo "$@" >> ${calls}\n[ "$1" = install ] && { echo "E: Unable to locate package chromium" >&2; exit 100; }\nexit 0`);
  const lines: string[] = [];
  expect(() => ensureChromium({ candidates: [path.join(dir, 'missing')], uid: 0, aptGet, log: (l) => lines.push(l) })).toThrow(/installing chromium with apt-get failed[\s\S]*Unable to locate package chromium/);
  expect(fs.readFileSync(calls, 'utf8').trim().split('\n')).toEqual(['update -qq', 'install -y -qq chromium']);
  expect(lines).toEqual([expect.stringMatching(/installing chromium/)]);
});

test('root installs the package with apt-get (update, then install) and uses the installed binary', () => {
  const target = path.join(dir, 'installed-chromium');
  const aptGet = executable('apt-get-ok', `[ "$1" = install ] && { printf '#!/bin/sh\\n' > ${target}; chmod 755 ${target}; }\nexit 0`);
  expect(ensureChromium({ candidates: [target], uid: 0, aptGet, log: () => undefined })).toBe(target);
});

describe('a launched browser', () => {
  let browser: BrowserHandle;
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>t</title><h1 id="h">from the server: ${req.headers.host}</h1><script>document.getElementById('h').textContent = 'script ran'</script>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  test('runs no script when JavaScript is off, and opens local custom host names', async () => {
    browser = await openBrowser({ javaScriptEnabled: false, localHosts: ['pages.example.test'] });
    const page = await browser.context.newPage();
    await page.goto(`http://pages.example.test:${port}/`);
    await expect(page.locator('h1').innerText()).resolves.toBe(`from the server: pages.example.test:${port}`);
    await browser.close();

    browser = await openBrowser();
    const withScript = await browser.context.newPage();
    await withScript.goto(`http://127.0.0.1:${port}/`);
    await expect(withScript.locator('h1').innerText()).resolves.toBe('script ran');
  }, 120_000);
});
