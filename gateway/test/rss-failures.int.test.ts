// What an RSS newsletter answers when things go wrong, through the real gateway and the real rss,
// messaging, subscriber and segment services, with a local feed server and a capture SMTP relay:
// - a feed that answers after 13 s: every operation reading it answers 422 feed_timeout (the feed's
//   10 s limit ends before the gateway's deadline for these calls), never 503;
// - an issue whose send cannot proceed (its template fails to render for a reader) becomes FAILED
//   after RSS_SEND_MAX_ATTEMPTS tries with lastError, counted in mailer_rss_issues_failed_total;
//   fixed and released again, it resumes at its cursor and every reader gets it exactly once.
import { TIME_LIMITS } from '@mailer/kit';
import { startCaptureRelay, waitFor, type CaptureRelay } from '@mailer/testing';
import { expectError } from './support/harness';
import { rss2, startRssStack, type RssStack } from './support/rss-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(240_000);

let relay: CaptureRelay;
let env: RssStack;
let a: Api;
let profile: string;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startRssStack({
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
    // Pages of 2 readers, a failed try retried after 1 s, FAILED after 3 failed tries.
    rssEnv: { RSS_SEND_PAGE_SIZE: '2', RSS_SEND_RETRY_SECONDS: '1', RSS_SEND_MAX_ATTEMPTS: '3' },
  });
  a = await env.account('failures');
  profile = expectStatus(await a.post('/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' }), 201).id;
});
afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

let feedSeq = 0;
function feed(body: string) {
  const path = `/failures/${++feedSeq}.xml`;
  env.feeds.set(path, { body });
  return { url: `${env.feeds.origin}${path}`, slow: () => env.feeds.set(path, { body, delayMs: 13_000 }), set: (next: string) => env.feeds.set(path, { body: next }) };
}

const newsletter = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'Digest',
  sourceUrl: url,
  triggerMode: 'INSTANT',
  senderProfileId: profile,
  subjectPattern: '{{ items[0].title }}',
  htmlContent: '{% for item in items %}<h1>{{ item.title }}</h1>{% endfor %}',
  ...extra,
});

/** The answer and how long it took. */
async function timed<T>(request: Promise<T>): Promise<{ res: T; ms: number }> {
  const started = Date.now();
  const res = await request;
  return { res, ms: Date.now() - started };
}

it('a feed that answers after 13 s: preview, create, PUT, check and resume with rebaseline answer 422 feed_timeout after the feed limit, within the gateway deadline', async () => {
  const good = rss2('Slow Blog', [{ guid: 's-1', title: 'First' }]);
  const slow = feed(good);
  slow.slow();
  const toCheck = feed(good);
  const checked = expectStatus(await a.post('/rss-newsletters', newsletter(toCheck.url)), 201);
  toCheck.slow();
  const toResume = feed(good);
  const paused = expectStatus(await a.post('/rss-newsletters', newsletter(toResume.url)), 201);
  expectStatus(await a.post(`/rss-newsletters/${paused.id}/pause`), 200);
  toResume.slow();
  const toMove = expectStatus(await a.post('/rss-newsletters', newsletter(feed(good).url)), 201);

  const answers = await Promise.all([
    timed(a.post('/rss-newsletters/preview', { url: slow.url })),
    timed(a.post('/rss-newsletters', newsletter(slow.url))),
    timed(a.put(`/rss-newsletters/${toMove.id}`, newsletter(slow.url))),
    timed(a.post(`/rss-newsletters/${checked.id}/check`)),
    timed(a.post(`/rss-newsletters/${paused.id}/resume`, { rebaseline: true })),
  ]);
  for (const { res, ms } of answers) {
    expectError(res, 422, 'feed_timeout');
    expect(res.json.message).toBe('the feed could not be read: the feed did not answer completely within 10 s');
    // The feed limit ended the read (a 422, not the gateway's 503 at its own deadline), not earlier.
    expect(ms).toBeGreaterThanOrEqual(TIME_LIMITS.feedRead - 50);
  }
  // The check recorded why; nothing else changed.
  expect(expectStatus(await a.get(`/rss-newsletters/${checked.id}`), 200).lastError).toBe('feed_timeout: the feed did not answer completely within 10 s');
  expect(expectStatus(await a.get(`/rss-newsletters/${paused.id}`), 200).status).toBe('PAUSED');
  expect(expectStatus(await a.get(`/rss-newsletters/${toMove.id}`), 200).sourceUrl).not.toBe(slow.url);
  expect(expectStatus(await a.get('/rss-newsletters'), 200).items.filter((n: { sourceUrl: string }) => n.sourceUrl === slow.url)).toEqual([]);
});

/** An RSS 2.0 document whose items carry the given descriptions (`summary` in templates). */
const rssWith = (items: Array<{ guid: string; title: string; description: string }>) =>
  `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Big Blog</title><link>https://blog.example/</link><description>d</description>${items
    .map((i) => `<item><guid isPermaLink="false">${i.guid}</guid><title>${i.title}</title><link>https://blog.example/${i.guid}</link><description>${i.description}</description></item>`)
    .join('')}</channel></rss>`;

function issueWhen(id: string, issueId: string, done: (issue: Record<string, any>) => boolean, timeoutMs = 90_000) { // eslint-disable-line @typescript-eslint/no-explicit-any
  return waitFor(`issue ${issueId} in the awaited state`, async () => {
    const issue = expectStatus(await a.get(`/rss-newsletters/${id}/issues`), 200).items.find((i: { id: string }) => i.id === issueId);
    return issue && done(issue) && issue;
  }, timeoutMs);
}

/** The rss service's log lines of failed tries to queue the issue's mail (sendFailures as counted). */
const failedTries = (issueId: string) =>
  env.rss.output().split('\n').filter((l) => l.includes(`"issueId":"${issueId}"`) && l.includes("queueing an issue's mail failed")).map((l) => JSON.parse(l).sendFailures);

async function failedMetric(reason: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${env.rss.ready.metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mailer_rss_issues_failed_total{') && l.includes(`reason="${reason}"`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

it('an issue whose template fails for a reader becomes FAILED after 3 tries with lastError and the metric; fixed and released again, it resumes at its cursor and every reader gets it once', async () => {
  const readers = ['ann', 'bob', 'boom', 'cid', 'dan', 'eve'].map((name) => `${name}@failing.test`);
  for (const email of readers) expectStatus(await a.post('/subscribers', { email, firstName: email.startsWith('boom') ? 'Boom' : 'Reader' }), 201);
  const old = { guid: 'f-old', title: 'Old', description: 'short' };
  const f = feed(rssWith([old]));
  // Printed twice for Boom, a summary of 600,000 characters passes the renderer's 1 MiB output limit.
  const failing = '{% for item in items %}<h1>{{ item.title }}</h1>{% if subscriber.firstName == "Boom" %}{{ item.summary }}{{ item.summary }}{% endif %}{% endfor %}';
  const n = expectStatus(await a.post('/rss-newsletters', newsletter(f.url, { htmlContent: failing })), 201);
  const before = await failedMetric('template_render_failed');
  f.set(rssWith([{ guid: 'f-big', title: 'Big news', description: 'x'.repeat(600_000) }, old]));
  const { issueId } = expectStatus(await a.post(`/rss-newsletters/${n.id}/check`), 200);

  const failed = await issueWhen(n.id, issueId, (i) => i.status === 'FAILED');
  expect(failed).toMatchObject({ status: 'FAILED', sentAt: null, lastError: expect.stringMatching(/^template_render_failed: /) });
  // The pages before Boom's were queued (Boom's page is wherever the audience order puts it).
  expect(failed.recipientCount).toBeLessThanOrEqual(readers.length - 2);
  expect(await failedMetric('template_render_failed')).toBe(before + 1);
  expect(failedTries(issueId)).toEqual([1, 2, 3]);

  // Fixed (the summary printed once) and released again: the send resumes where it stopped.
  expectStatus(await a.put(`/rss-newsletters/${n.id}`, newsletter(f.url, { htmlContent: '{% for item in items %}<h1>{{ item.title }}</h1>{{ item.summary | truncate: 40 }}{% endfor %}' })), 200);
  const released = expectStatus(await a.post(`/rss-newsletters/${n.id}/issues/${issueId}/release`), 200);
  expect(released).toMatchObject({ status: 'RELEASED', lastError: null });
  const sent = await issueWhen(n.id, issueId, (i) => i.status === 'SENT' && i.deliveredCount >= readers.length);
  expect(sent).toMatchObject({ status: 'SENT', recipientCount: readers.length, deliveredCount: readers.length, lastError: null });
  // FAILED stayed FAILED until released: no try after the third, the issue failed once.
  expect(failedTries(issueId)).toEqual([1, 2, 3]);
  expect(await failedMetric('template_render_failed')).toBe(before + 1);
  // Every job handled (the barrier): each reader has exactly one.
  await env.settled();
  for (const email of readers) expect(relay.receivedFor(email).filter((m) => m.subject === 'Big news')).toHaveLength(1);
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/${issueId}/release`), 409, 'rss_issue_not_pending_review');
});
