import type { BrowserContext } from 'playwright-core';
import { openBrowser, type BrowserHandle } from '@mailer/testing/browser';
import { startStack, type Stack } from './support/harness';

/**
 * /docs as a user sees it: a real Chromium opens the page served by a real gateway, and the
 * operations of the published document are listed and can be expanded. (A page whose init script
 * throws is blank, which no HTTP-level assertion notices.)
 */

describe('GET /docs in a browser', () => {
  let stack: Stack;
  let chromium: BrowserHandle;
  let browser: BrowserContext;

  beforeAll(async () => {
    stack = await startStack();
    // A fresh profile per run: nothing cached from an earlier page version.
    chromium = await openBrowser();
    browser = chromium.context;
  }, 120_000); // a gateway and a browser start, on a loaded machine

  afterAll(async () => {
    await chromium?.close();
    await stack?.stop();
  });

  it('lists the operations of /openapi.json, and one expands to its description and responses', async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    const res = await page.goto(`${stack.gateways[0].url}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);

    // Swagger UI renders one block per operation once it has fetched and parsed the document.
    const operations = page.locator('.opblock');
    await operations.first().waitFor({ state: 'visible', timeout: 60_000 }).catch((err: Error) => {
      throw new Error(`${err.message}\nerrors thrown in the page: ${JSON.stringify(pageErrors)}`);
    });
    expect(pageErrors).toEqual([]);
    // Every operation of the document is listed (under each of its tags: ids are operations-<tag>-<operationId>).
    const doc = await (await fetch(`${stack.gateways[0].url}/openapi.json`)).json();
    const documented = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((item) => Object.values(item).map((op) => op.operationId))
      .sort();
    // Swagger UI virtualizes the list once tags + operations reach 150: only the blocks near the
    // viewport are in the page, so the reader scrolls. Scroll to the end, collecting what is shown.
    const ids = new Set<string>();
    for (let lastY = -1; ;) {
      for (const id of await operations.evaluateAll((blocks) => blocks.map((b) => b.id))) ids.add(id);
      const y = await page.evaluate(() => {
        window.scrollBy(0, window.innerHeight / 2);
        return window.scrollY;
      });
      if (y === lastY) break;
      lastY = y;
      await page.waitForTimeout(50);
    }
    const listed = [...new Set([...ids].map((id) => id.replace(/^operations-[^-]+-/, '')))].sort();
    expect(listed).toEqual(documented);
    await expect(page.locator('.info .title').innerText()).resolves.toContain('Mailer customer API');
    // Text with `$` sequences (regular expressions in the error catalogue) is shown as written.
    const pattern = /`([^`]*\$[^`]*)`/.exec(JSON.stringify(doc['x-error-catalogue']))?.[1];
    expect(pattern).toBeTruthy();
    await expect(page.locator('.info').innerText()).resolves.toContain(pattern);

    // Expanding the custom event operation shows its description and its responses.
    const sendEvent = page.locator('#operations-Events-sendCustomEvent');
    await page.evaluate(() => window.scrollTo(0, 0));
    while ((await sendEvent.count()) === 0) {
      const before = await page.evaluate(() => window.scrollY);
      if (before === (await page.evaluate(() => (window.scrollBy(0, window.innerHeight / 2), window.scrollY)))) break;
      await page.waitForTimeout(50);
    }
    await sendEvent.locator('.opblock-summary-control').click();
    const body = sendEvent.locator('.opblock-body');
    await body.waitFor({ state: 'visible', timeout: 10_000 });
    const text = await body.innerText();
    expect(text).toContain('durably stored');
    expect(text).toContain('eventKey'); // the request body's example
    expect(text).toMatch(/\b202\b/);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it("never shows swagger-ui-dist's stock Petstore page", async () => {
    const res = await fetch(`${stack.gateways[0].url}/docs/index.html`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/docs/');
    const page = await browser.newPage();
    await page.goto(`${stack.gateways[0].url}/docs/index.html`, { waitUntil: 'load' });
    await page.locator('.info .title').waitFor({ state: 'visible', timeout: 60_000 });
    await expect(page.locator('.info .title').innerText()).resolves.toContain('Mailer customer API');
    await page.close();
  }, 120_000);
});
