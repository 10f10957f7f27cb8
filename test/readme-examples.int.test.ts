// The README's examples, pasted in order into one bash shell beside a fresh `npm run up` (the runner,
// scripts/run-local.js, on free ports and a temporary data directory), do what their comments say.
// The examples are the blocks marked `<!-- example: <name> -->` (test/support/markdown-examples.ts)
// of the files below, in reading order; each has its stated outcome checked here: the HTTP calls it
// makes and their statuses, what it prints, and what the system did (mail in the local mail catcher,
// records read back through the API). The HTML snippet is filled in as the README says and submitted
// as a browser submits a form.
import fs from 'node:fs';
import path from 'node:path';
import { getAttributeValue, findAll } from 'domutils';
import { parseDocument } from 'htmlparser2';
import { caughtMails, repoRoot, startLocalSystem, type LocalSystem } from '@mailer/testing';
import { BashSession, jsonValues, type ExampleRun } from './support/bash-session';
import { examplesOf, type MarkdownExample } from './support/markdown-examples';

/** Where the examples are, in the order a reader reads them. */
// In the order a reader meets them: the README's setup, the operator CLI, then the integrators' tour.
const FILES = ['README.md', 'docs/operations.md', 'docs/integrators.md'];

let system: LocalSystem;
let shell: BashSession;

beforeAll(async () => {
  system = await startLocalSystem();
  // A fresh terminal's environment: no npm or jest variables, only what the README says to export.
  const { PATH, HOME, LANG, TMPDIR } = process.env;
  const terminal = Object.fromEntries(Object.entries({ PATH, HOME, LANG, TMPDIR }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  shell = new BashSession(repoRoot, { ...terminal, GATEWAY_PORT: system.settings.GATEWAY_PORT, MAILER_DATA_DIR: system.settings.MAILER_DATA_DIR });
}, 120_000);

afterAll(async () => {
  await shell?.stop();
  await system?.stop();
}, 60_000);

async function api(method: string, urlPath: string, apiKey = system.apiKey): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`${system.url}${urlPath}`, { method, headers: { 'x-api-key': apiKey } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
const get = async (urlPath: string) => {
  const { status, body } = await api('GET', urlPath);
  expect([urlPath, status]).toEqual([urlPath, 200]);
  return body;
};

/** Polls until `check` stops throwing (its last failure is the test's if the deadline passes). */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Every mail caught so far, as `recipient: subject`, sorted. */
const mailbox = async () => (await caughtMails(system.mailUi)).map((m) => `${m.to.map((t) => t.address).join(',')}: ${m.subject}`).sort();
/** The confirmation mail's subject: it names the form (a consent signup has none). */
const confirm = (to = 'our mailing list') => `Please confirm your subscription to ${to}`;

/** `METHOD /path STATUS` of each call, ids as `{id}`; every call must go to the system's gateway. */
function calls(run: ExampleRun): string[] {
  return run.calls.map(({ status, method, url }) => {
    expect(url.startsWith(`${system.url}/`)).toBe(true);
    return `${method} ${url.slice(system.url.length).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{id}')} ${status}`;
  });
}

/** What each example's comments say, checked. */
const OUTCOMES: Record<string, (run: ExampleRun, example: MarkdownExample) => Promise<void>> = {
  async setup(run) {
    expect(calls(run)).toEqual(['POST /subscribers 201', 'GET /subscribers?pageSize=10 200', 'POST /events 202']);
    const [created, list, event] = jsonValues(run.stdout);
    expect(created).toMatchObject({ email: 'ann@example.org', firstName: 'Ann', subscriberStatus: 'ACTIVE' });
    expect(list).toMatchObject({ totalItems: 1, items: [{ email: 'ann@example.org' }] });
    expect(event).toMatchObject({ duplicate: false });
  },

  async 'operator-cli'(run) {
    expect(calls(run)).toEqual([]);
    const [shown, kept, rotated, deleted, resealed] = jsonValues(run.stdout);
    expect(kept).toEqual(shown);
    expect(rotated.accountId).toBe(shown.accountId);
    expect(rotated.apiKey).toMatch(/^mk_[A-Za-z0-9]{40}$/);
    expect(rotated.apiKey).not.toBe(shown.apiKey);
    expect(deleted).toEqual({ accountId: shown.accountId, deleted: true });
    expect(resealed).toMatchObject({ apiKeys: { failed: [] }, webhookSecrets: { failed: [] } });
    // the rotated-away key and the deleted one open nothing; the development key still works
    expect((await api('GET', '/subscribers', shown.apiKey)).status).toBe(401);
    expect((await api('GET', '/subscribers', rotated.apiKey)).status).toBe(401);
    expect((await api('GET', '/subscribers')).status).toBe(200);
  },

  async 'first-mail'(run) {
    expect(calls(run)).toEqual(['POST /sender-profiles 201', 'POST /email-templates 201', 'POST /email-messages 202']);
    const [profile, , message] = jsonValues(run.stdout);
    expect(profile).toMatchObject({ isDefault: true });
    expect(message).toMatchObject({ status: 'QUEUED' });
    await eventually(async () => expect(await mailbox()).toEqual(['ann@example.org: Hello Ann']));
  },

  async automation(run) {
    expect(calls(run)).toEqual(['POST /automations 201', 'POST /events 202', 'GET /events?eventKey=order.paid 200', 'GET /automations/{id}/runs 200']);
    const automation = await shell.value('AUTOMATION');
    const events = await eventually(async () => {
      const { items } = await get('/events?eventKey=order.paid');
      expect(items.map((e: { outcome: string }) => e.outcome)).toEqual(['RUNS_STARTED', 'NO_MATCHING_AUTOMATION']);
      return items;
    });
    const { items: runs } = await get(`/automations/${automation}/runs`);
    expect(runs).toMatchObject([{ runId: events[0].runIds[0], email: 'ann@example.org', status: 'WAITING', stepIndex: 0 }]);
    const inAnHour = Date.parse(runs[0].dueAt) - Date.now();
    expect(inAnHour).toBeGreaterThan(55 * 60_000);
    expect(inAnHour).toBeLessThanOrEqual(60 * 60_000);
  },

  async 'consent-signup'(run) {
    expect(calls(run)).toEqual(['POST /events 202']);
    await eventually(async () => {
      const { items } = await get('/events?eventKey=order.paid');
      expect(items[0]).toMatchObject({ email: 'new@example.org', outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED' });
    });
    expect(await get('/subscribers/by-email/new%40example.org')).toMatchObject({
      subscriberStatus: 'UNCONFIRMED',
      gdprAgreement: 'https://shop.example/checkout (given 2026-03-01T10:00:00.000Z)',
    });
    await eventually(async () => expect(await mailbox()).toContain(`new@example.org: ${confirm()}`));
  },

  async webhooks(run) {
    expect(calls(run)).toEqual(['POST /webhook-subscriptions 201', 'POST /webhook-subscriptions/{id}/test 202', 'GET /webhook-subscriptions/{id}/deliveries 200']);
    const [hooks, hook] = [await shell.value('HOOKS'), await shell.value('HOOK')];
    const received = await eventually(async () => {
      const bodies = jsonValues(fs.readFileSync(path.join(hooks, 'received'), 'utf8'));
      expect(bodies.map((b) => b.type)).toContain('webhook.test');
      return bodies;
    });
    const test = received.find((b) => b.type === 'webhook.test');
    await eventually(async () => {
      const { items } = await get(`/webhook-subscriptions/${hook}/deliveries`);
      expect(items.find((d: { type: string }) => d.type === 'webhook.test')).toMatchObject({ eventId: test.id, status: 'DELIVERED', attempts: [{ statusCode: 204 }] });
    });
  },

  async 'create-form'(run) {
    expect(calls(run)).toEqual(['POST /forms 201', 'GET /forms/{id}/embedding 200']);
    const form = await shell.value('FORM');
    const [embedding] = jsonValues(run.stdout);
    expect(embedding.id).toBe(form);
    expect(embedding.inputFields.map((i: { personalizationTagName: string }) => i.personalizationTagName)).toEqual(['email', 'first_name']);
    expect(run.stdout.split('\n')[0]).toBe(form);
  },

  async 'embed-snippet'(_run, example) {
    // The reader's part: the snippet filled in as the README says, on a page of the allowed origin;
    // the reader types into every visible input and presses the button.
    const form = await shell.value('FORM');
    const html = example.code.replaceAll('https://<gateway>', system.url).replaceAll('<formId>', form);
    const doc = parseDocument(html);
    const [element] = findAll((e) => e.name === 'form', doc.children);
    const typed = { email: 'bea@example.com', text: 'Bea' };
    const body = new URLSearchParams();
    for (const input of findAll((e) => e.name === 'input', doc.children)) {
      const hidden = /display:\s*none/.test(getAttributeValue(input, 'style') ?? '');
      body.append(getAttributeValue(input, 'name')!, hidden ? '' : getAttributeValue(input, 'type') === 'email' ? typed.email : typed.text);
    }
    const answer = await fetch(getAttributeValue(element, 'action')!, {
      method: (getAttributeValue(element, 'method') ?? 'get').toUpperCase(),
      headers: { origin: 'https://shop.example.com', accept: 'text/html,application/xhtml+xml', 'content-type': 'application/x-www-form-urlencoded' },
      body,
      redirect: 'manual',
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toMatch(new RegExp(`/public/forms/${form}/thank-you$`));
    // every value the reader typed is kept: the inputs are named as the form's
    await eventually(async () => {
      const { items } = await get(`/forms/${form}/submissions`);
      expect(items.find((s: { email: string }) => s.email === typed.email)).toMatchObject({ values: { email: typed.email, first_name: typed.text }, decision: 'QUEUED' });
    });
    await eventually(async () => expect(await mailbox()).toContain(`${typed.email}: ${confirm('Newsletter')}`));
  },

  async 'form-submission'(run) {
    expect(calls(run)).toEqual(['POST /public/forms/{id}/submissions 202']);
    expect(jsonValues(run.stdout)).toEqual([{ received: true }]);
    const form = await shell.value('FORM');
    await eventually(async () => {
      const { items } = await get(`/forms/${form}/submissions`);
      expect(items.find((s: { email: string }) => s.email === 'ann@example.com')).toMatchObject({
        values: { email: 'ann@example.com', first_name: 'Ann' },
        consent: { text: 'Yes, send me the newsletter' },
        decision: 'QUEUED',
      });
    });
    await eventually(async () => expect(await mailbox()).toContain(`ann@example.com: ${confirm('Newsletter')}`));
  },

  async rss(run) {
    expect(calls(run)).toEqual([
      'POST /rss-newsletters/preview 200',
      'POST /sender-profiles 201',
      'POST /rss-newsletters 201',
      'POST /rss-newsletters/{id}/check 200',
      'POST /rss-newsletters/{id}/check 200',
      'GET /rss-newsletters/{id}/issues 200',
      'POST /subscribers 201',
      'GET /rss-newsletters/{id}/issues 200',
      'POST /rss-newsletters/{id}/issues/{id}/release 200',
      'GET /rss-newsletters/{id}/issues 200',
    ]);
    const [preview, baseline, check, pending, released] = jsonValues(run.stdout);
    expect(preview).toMatchObject({ feedTitle: 'My blog', items: [{ title: 'First post' }] });
    expect(baseline).toEqual({ newItems: 0, issueId: null });
    expect(check).toMatchObject({ newItems: 1 });
    expect(pending.items).toMatchObject([{ id: check.issueId, status: 'PENDING_REVIEW', subject: 'My blog: Second post' }]);
    expect(released).toMatchObject({ id: check.issueId, status: 'RELEASED' });
    // "status SENT, recipientCount 2, deliveredCount 2": Ann and Rita, the ACTIVE subscribers
    const newsletter = await shell.value('ID');
    await eventually(async () => {
      const { items } = await get(`/rss-newsletters/${newsletter}/issues`);
      expect(items[0]).toMatchObject({ status: 'SENT', recipientCount: 2, deliveredCount: 2 });
    });
    await eventually(async () => expect((await mailbox()).filter((m) => m.endsWith('My blog: Second post'))).toEqual(['ann@example.org: My blog: Second post', 'reader@example.org: My blog: Second post']));
  },

  async broadcast(run) {
    // The until loops read the broadcast as often as they need: each run of reads is one call here.
    const distinct = calls(run).filter((c, i, all) => c !== all[i - 1]);
    expect(distinct).toEqual([
      'POST /email-templates 201',
      'POST /subscribers 201',
      'POST /broadcasts 201',
      'POST /broadcasts/{id}/test 202',
      'POST /broadcasts/{id}/schedule 200',
      'GET /broadcasts/{id} 200',
      'GET /broadcasts/{id}/recipients?status=EXCLUDED 200',
      'POST /broadcasts/{id}/resend-to-non-openers 201',
      'POST /broadcasts/{id}/schedule 200',
      'GET /broadcasts/{id} 200',
    ]);
    const [testMessages, during, after, excluded] = jsonValues(run.stdout);
    expect(testMessages).toHaveLength(1);
    const { totalItems: readers } = await get('/subscribers?pageSize=1');
    for (const r of [during, after]) {
      const excludedSum = Object.values(r.excluded as Record<string, number>).reduce((x, y) => x + y, 0);
      expect(r.audience).toBe(r.recipients + excludedSum);
      expect(r.recipients).toBe(r.pending + r.sent + r.delivered + r.deferred + r.failed + r.bounced + r.suppressed);
    }
    // "audience 6, NOT_ACTIVE 4, recipients 2, delivered 2": every subscriber of the account, Ann and Rita mailed
    expect(after).toMatchObject({ audience: readers, excluded: { NOT_ACTIVE: readers - 2 }, recipients: 2, pending: 0, sent: 0, delivered: 2 });
    expect(readers).toBe(6);
    expect(excluded).toContain('bob@example.org NOT_ACTIVE');
    expect(excluded).toHaveLength(readers - 2);
    expect(run.stdout.split('\n').filter((l) => /^[A-Z]+$/.test(l))).toEqual(['SENDING', 'SENDING']);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('2');
    await eventually(async () => expect((await mailbox()).filter((m) => /: (\[Test\] )?(Spring for|In case you missed it)/.test(m))).toEqual([
      'ann@example.org: In case you missed it, Ann',
      'ann@example.org: Spring for Ann',
      'editor@example.org: [Test] Spring for you',
      'reader@example.org: In case you missed it, Rita',
      'reader@example.org: Spring for Rita',
    ]));
  },
};

it('the examples, pasted in order into one shell beside a fresh system, do what their comments say', async () => {
  const examples = examplesOf(FILES.map((f) => path.join(repoRoot, f)));
  // Each example has its outcome checked, and each check has its example (a renamed or moved one fails here).
  expect(examples.map((e) => e.name)).toEqual(Object.keys(OUTCOMES));
  for (const example of examples) {
    const where = `${path.relative(repoRoot, example.file)}:${example.line} (example "${example.name}")`;
    try {
      const run = example.lang === 'html' ? { stdout: '', stderr: '', calls: [] } : await shell.run(example.code);
      try {
        await OUTCOMES[example.name](run, example);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n--- it printed:\n${run.stdout}\n--- on stderr:\n${run.stderr}`);
      }
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`);
    }
  }
  // Every mail the examples sent, once each (the automation's "welcome" waits an hour).
  expect(await mailbox()).toEqual([
    `ann@example.com: ${confirm('Newsletter')}`,
    'ann@example.org: Hello Ann',
    'ann@example.org: In case you missed it, Ann',
    'ann@example.org: My blog: Second post',
    'ann@example.org: Spring for Ann',
    `bea@example.com: ${confirm('Newsletter')}`,
    'editor@example.org: [Test] Spring for you',
    `new@example.org: ${confirm()}`,
    'reader@example.org: In case you missed it, Rita',
    'reader@example.org: My blog: Second post',
    'reader@example.org: Spring for Rita',
  ]);
}, 150_000);
