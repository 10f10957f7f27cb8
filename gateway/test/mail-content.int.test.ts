// What readers find in mail, and what a hostile newsletter or feed cannot do, through real processes
// (the gateway, the rss, messaging, subscriber and segment services, a feed served locally, every mail
// captured by a real SMTP relay):
// - a feed item's HTML is sanitized when the feed is read: the phishing item (a form posting to
//   another site, a script, a tracking pixel, a javascript: link) reaches the reader as its text and
//   pictures only, in the html and in the plain-text part, which has no tags;
// - marketing mail (RSS, automation) without an unsubscribe link gets a footer with it in both parts;
//   with its own link it gets none; transactional mail never does;
// - a newsletter template that would exhaust the rss service (`(1..30000000) | join`, doubling, deep
//   nesting) is refused at save (422 template_render_failed) and the service keeps answering.
import { startCaptureRelay, type CapturedMail, type CaptureRelay } from '@mailer/testing';
import { expectError } from './support/harness';
import { startRssStack, type RssStack } from './support/rss-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(180_000);

let relay: CaptureRelay;
let env: RssStack;
let a: Api;
let profile: string;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startRssStack({ messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' } });
  a = await env.account('content');
  profile = expectStatus(await a.post('/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' }), 201).id;
});
afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

async function mailFor(email: string, timeoutMs = 60_000): Promise<CapturedMail> {
  const [mail] = await relay.waitFor((all) => all.some((m) => m.rcptTo.includes(email)), timeoutMs).then((all) => all.filter((m) => m.rcptTo.includes(email)));
  return mail;
}

/** The unsubscribe URL of a marketing mail, from its List-Unsubscribe header. */
const unsubscribeUrlOf = (mail: CapturedMail) => /^<([^>]+)>$/.exec(mail.headers['list-unsubscribe'])![1];
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

let feedSeq = 0;
type FeedItemXml = { guid: string; title: string; description?: string; content?: string };
function feed(items: FeedItemXml[]) {
  const path = `/content/${++feedSeq}.xml`;
  const set = (next: FeedItemXml[]) => {
    const entries = next.map((i) => `<item><guid isPermaLink="false">${i.guid}</guid><title>${i.title}</title><link>https://blog.example/${i.guid}</link>`
      + `<description><![CDATA[${i.description ?? ''}]]></description>${i.content ? `<content:encoded><![CDATA[${i.content}]]></content:encoded>` : ''}</item>`).join('');
    env.feeds.set(path, { body: `<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Fish Blog</title><link>https://blog.example/</link>${entries}</channel></rss>` });
  };
  set(items);
  return { url: `${env.feeds.origin}${path}`, set };
}

/** A newsletter (baselined on `old`), a new item published, checked: its issue's mail is on its way. */
async function sendIssue(htmlContent: string, item: FeedItemXml): Promise<void> {
  const f = feed([{ guid: `old-${feedSeq}`, title: 'Old' }]);
  const n = expectStatus(await a.post('/rss-newsletters', { name: 'Fish weekly', sourceUrl: f.url, triggerMode: 'INSTANT', senderProfileId: profile, subjectPattern: '{{ items[0].title }}', htmlContent }), 201);
  f.set([item, { guid: `old-${feedSeq}`, title: 'Old' }]);
  const { issueId } = expectStatus(await a.post(`/rss-newsletters/${n.id}/check`), 200);
  expect(issueId).toEqual(expect.any(String));
}

const PHISHING = '<p>Fresh <b>trout</b> today.</p>'
  + '<form action="https://phish.example/login" method="post"><p>Confirm your bank password</p><input name="password"><button>Sign in</button></form>'
  + '<script>document.location = "https://phish.example/"</script>'
  + '<img src="https://tracker.example/pixel.gif" width="1" height="1" alt="">'
  + '<a href="javascript:alert(1)" onclick="steal()">Win a prize</a>'
  + '<p><img src="https://blog.example/trout.jpg" alt="A trout"></p>';

describe('RSS issues', () => {
  it('the phishing item arrives sanitized: no form, script, pixel or javascript: link in html or text; the summary prints as markup and the text part has no tags; no unsubscribe link -> the footer', async () => {
    // Two subscribers, so the mail goes to an audience; neither newsletter template has an unsubscribe link.
    expectStatus(await a.post('/subscribers', { email: 'reader@fish.test', firstName: 'Rita' }), 201);
    await sendIssue(
      '<h1>{{ newsletter.name }}</h1>{% for item in items %}<h2>{{ item.title }}</h2>{{ item.summary }}<div>{{ item.content | raw }}</div>{% endfor %}',
      { guid: 'phish', title: 'Trout &amp; chips', description: PHISHING, content: PHISHING },
    );
    const mail = await mailFor('reader@fish.test');
    const html = mail.html!;
    const text = mail.text!;
    for (const part of [html, text]) {
      for (const hostile of ['phish.example', '<form', 'password', 'Sign in', '<script', 'document.location', 'tracker.example', 'javascript:', 'onclick', 'steal']) {
        expect({ part: part.slice(0, 80), hostile, found: part.includes(hostile) }).toMatchObject({ found: false });
      }
    }
    // The item's HTML as markup (with or without `| raw`), the feed's plain text escaped.
    expect(count(html, '<b>trout</b>')).toBe(2);
    expect(html).toContain('alt="A trout"');
    expect(html).toContain('<h2>Trout &amp; chips</h2>');
    // The text part is text: what the reader sees, no tag.
    expect(text).toContain('Fresh trout today.');
    expect(text).not.toMatch(/<\/?[a-z][^>]*>/i);
    // No unsubscribe link in the template: the footer, in both parts, to the List-Unsubscribe URL.
    const unsubscribe = unsubscribeUrlOf(mail);
    expect(html).toMatch(new RegExp(`<a href="${unsubscribe.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}"[^>]*>Unsubscribe</a>`));
    expect(html).toContain('Manage your preferences</a>');
    expect(text).toContain(`Unsubscribe or manage your preferences: ${unsubscribe}`);
    // The footer's link goes straight to the preference page (never through the click redirect).
    const page = await fetch(unsubscribe.replace('https://mail.rss.test', env.gw.url));
    expect(page.status).toBe(200);
  });

  it('a template with its own unsubscribe link gets no footer', async () => {
    expectStatus(await a.post('/subscribers', { email: 'linked@fish.test' }), 201);
    relay.clear();
    await sendIssue('{% for item in items %}{{ item.summary }}{% endfor %}<p><a href="{{ links.unsubscribe }}">Leave this list</a></p>', { guid: 'linked', title: 'Linked', description: '<p>Hello</p>' });
    const mail = await mailFor('linked@fish.test');
    const unsubscribe = unsubscribeUrlOf(mail);
    expect(count(mail.html!, `href="${unsubscribe}"`)).toBe(1);
    expect(mail.html).toContain('Leave this list');
    expect(mail.html).not.toContain('Manage your preferences');
    expect(count(mail.text!, unsubscribe)).toBe(1);
  });

  it('the preview shows the sanitized summary', async () => {
    const f = feed([{ guid: 'pv', title: 'Preview', description: PHISHING }]);
    const preview = expectStatus(await a.post('/rss-newsletters/preview', { url: f.url }), 200);
    expect(preview.items[0].summary).toBe('<p>Fresh <b>trout</b> today.</p><a>Win a prize</a><p><img src="https://blog.example/trout.jpg" alt="A trout" /></p>');
  });
});

describe('automation and transactional mail', () => {
  it('an automation mail without unsubscribe link gets the footer, one with a link does not; a transactional mail never does', async () => {
    const b = await env.account('content-automation');
    expectStatus(await b.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' }), 201);
    expectStatus(await b.post('/subscribers', { email: 'ann@shop.test', firstName: 'Ann' }), 201);
    expectStatus(await b.post('/email-templates', { name: 'bare', subject: 'Bare {{ subscriber.firstName }}', html: '<html><body><p>Thanks for your order.</p></body></html>' }), 201);
    expectStatus(await b.post('/email-templates', { name: 'linked', subject: 'Linked', html: '<p>Hi</p><a href="{{ links.unsubscribe }}">Stop these mails</a>', text: 'Hi. Stop: {{ links.unsubscribe }}' }), 201);
    for (const [eventKey, templateName] of [['order.bare', 'bare'], ['order.linked', 'linked']]) {
      expectStatus(await b.post('/automations', { name: eventKey, trigger: { type: 'API_REQUEST', eventKey }, steps: [{ type: 'SEND_EMAIL', templateName }], active: true }), 201);
    }
    relay.clear();
    expectStatus(await b.post('/events', { eventKey: 'order.bare', email: 'ann@shop.test' }), 202);
    const bare = await mailFor('ann@shop.test');
    expect(bare.subject).toBe('Bare Ann');
    const unsubscribe = unsubscribeUrlOf(bare);
    // Inside the body, before the open pixel; in the text after the derived text.
    expect(bare.html).toMatch(new RegExp(`<p>Thanks for your order\\.</p><div [^>]*><a href="${unsubscribe.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}"[^>]*>Unsubscribe</a> &middot; <a [^>]*>Manage your preferences</a></div><img [^>]*/t/o/[^>]*/></body>`));
    expect(bare.text!.trimEnd()).toBe(`Thanks for your order.\n\n--\nUnsubscribe or manage your preferences: ${unsubscribe}`);

    relay.clear();
    expectStatus(await b.post('/events', { eventKey: 'order.linked', email: 'ann@shop.test' }), 202);
    const linked = await mailFor('ann@shop.test');
    expect(linked.subject).toBe('Linked');
    expect(linked.html).not.toContain('Manage your preferences');
    expect(linked.text!.trimEnd()).toBe(`Hi. Stop: ${unsubscribeUrlOf(linked)}`);

    relay.clear();
    expectStatus(await b.post('/email-messages', { name: 'bare', email: 'ann@shop.test' }), 202);
    const transactional = await mailFor('ann@shop.test');
    expect(transactional.headers['list-unsubscribe']).toBeUndefined();
    expect(transactional.html).not.toContain('Unsubscribe');
    expect(transactional.text!.trimEnd()).toBe('Thanks for your order.');
  });
});

describe('hostile newsletter templates', () => {
  const hostile: Array<[string, Record<string, string>, string]> = [
    ['heap bomb in the subject', { subjectPattern: '{{ (1..30000000) | join: "," }}' }, 'body.subjectPattern'],
    ['size doubling', { htmlContent: '{% assign s = "xx" %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s.size }}' }, 'body.htmlContent'],
    ['deep nesting', { htmlContent: '{% for a in (1..100000) %}{% for b in (1..100000) %}{% for c in (1..100000) %}x{% endfor %}{% endfor %}{% endfor %}' }, 'body.htmlContent'],
  ];

  it.each(hostile)('%s: 422 template_render_failed at save (create and PUT), nothing stored', async (_name, over, path) => {
    const f = feed([{ guid: 'h', title: 'H' }]);
    const body = { name: 'Hostile', sourceUrl: f.url, triggerMode: 'INSTANT', senderProfileId: profile, subjectPattern: '{{ items[0].title }}', htmlContent: '<p>{{ items[0].title }}</p>' };
    const before = expectStatus(await a.get('/rss-newsletters'), 200).items.length;
    const created = await a.post('/rss-newsletters', { ...body, ...over });
    expectError(created, 422, 'template_render_failed');
    expect(created.json.details).toEqual([{ path, problem: expect.any(String) }]);
    expect(expectStatus(await a.get('/rss-newsletters'), 200).items.length).toBe(before);
    const n = expectStatus(await a.post('/rss-newsletters', body), 201);
    expectError(await a.put(`/rss-newsletters/${n.id}`, { ...body, ...over }), 422, 'template_render_failed');
    expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200)).toMatchObject({ subjectPattern: body.subjectPattern, htmlContent: body.htmlContent });
    expectStatus(await a.delete(`/rss-newsletters/${n.id}`), 204);
  });

  it('the rss service survives heap bombs saved at once and keeps answering meanwhile', async () => {
    const f = feed([{ guid: 'hb', title: 'HB' }]);
    const bomb = { name: 'Bomb', sourceUrl: f.url, triggerMode: 'INSTANT', senderProfileId: profile, subjectPattern: '{{ (1..30000000) | join: "," }}', htmlContent: '{{ (1..30000000) | join: "," }}' };
    const saves = Array.from({ length: 4 }, () => a.post('/rss-newsletters', bomb));
    const list = a.get('/rss-newsletters');
    for (const res of await Promise.all(saves)) expectError(res, 422, 'template_render_failed');
    expectStatus(await list, 200);
    expect(() => process.kill(env.rss.pid, 0)).not.toThrow();
    expect(env.rss.output()).not.toMatch(/heap out of memory|FATAL ERROR/i);
    expectStatus(await a.get('/rss-newsletters'), 200);
  });
});
