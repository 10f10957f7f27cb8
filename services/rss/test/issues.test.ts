import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DomainError } from '@mailer/kit';
import { takeHtmlValues } from '@mailer/templates';
import { checkIssueTemplates, decideIssue, initialIssueState, issueSubject, issueValues, newItems, type PendingItem } from '../src/domain/issues';

const T0 = new Date('2026-11-24T12:00:00Z');
const DAY = 86_400_000;

const item = (n: number, ageDays = 0, extra: Partial<PendingItem> = {}): PendingItem => ({
  key: `k${n}`,
  guid: `g${n}`,
  title: `Item ${n}`,
  link: `https://blog.example/${n}`,
  publishedAt: new Date(T0.getTime() - ageDays * DAY - n * 1000),
  summary: '',
  content: '',
  author: '',
  imageUrl: '',
  foundAt: T0,
  ...extra,
});

describe('newItems', () => {
  const seen = { keys: new Set(['k1']), links: new Set(['https://blog.example/2']) };
  it('keeps items whose key and link are both unseen, each once, in feed order', () => {
    const got = newItems([item(3), item(1), item(4), item(3)], seen);
    expect(got.map((i) => i.key)).toEqual(['k3', 'k4']);
  });
  it('an item whose guid changed but whose link did not is not new', () => {
    expect(newItems([item(2, 0, { key: 'changed-guid' })], seen)).toEqual([]);
  });
  it('an item without a link is judged by its key alone', () => {
    expect(newItems([item(5, 0, { link: '' })], { keys: new Set(), links: new Set(['']) })).toHaveLength(1);
  });
});

describe('decideIssue', () => {
  const base = { minItems: null, thresholdMaxAgeDays: null, maxItemsPerIssue: 10 };
  it('INSTANT: any waiting item makes an issue; nothing waiting makes none', () => {
    expect(decideIssue({ ...base, triggerMode: 'INSTANT' }, [item(1)], { now: T0, tick: false }).issueItems).toHaveLength(1);
    expect(decideIssue({ ...base, triggerMode: 'INSTANT' }, [], { now: T0, tick: true }).issueItems).toHaveLength(0);
  });
  it('SCHEDULE: only at a tick, and none when nothing waits', () => {
    const mode = { ...base, triggerMode: 'SCHEDULE' as const };
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: false }).issueItems).toHaveLength(0);
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: true }).issueItems).toHaveLength(2);
    expect(decideIssue(mode, [], { now: T0, tick: true }).issueItems).toHaveLength(0);
  });
  it('THRESHOLD: an issue once minItems wait; expired items drop out of the wait', () => {
    const mode = { ...base, triggerMode: 'THRESHOLD' as const, minItems: 3, thresholdMaxAgeDays: 7 };
    expect(decideIssue(mode, [item(1), item(2)], { now: T0, tick: false }).issueItems).toHaveLength(0);
    expect(decideIssue(mode, [item(1), item(2), item(3)], { now: T0, tick: false }).issueItems).toHaveLength(3);
    const withOld = decideIssue(mode, [item(1), item(2), item(3, 8)], { now: T0, tick: false });
    expect(withOld.issueItems).toHaveLength(0);
    expect(withOld.expired.map((i) => i.key)).toEqual(['k3']);
  });
  it('maxItemsPerIssue: the newest items go in, the rest stay', () => {
    const d = decideIssue({ ...base, triggerMode: 'INSTANT', maxItemsPerIssue: 2 }, [item(3, 2), item(1, 0), item(2, 1)], { now: T0, tick: false });
    expect(d.issueItems.map((i) => i.key)).toEqual(['k1', 'k2']);
  });
});

describe('initialIssueState', () => {
  it('AUTO releases at once; REVIEW waits, until reviewAutoReleaseMinutes when set', () => {
    expect(initialIssueState('AUTO', 30, T0)).toEqual({ status: 'RELEASED', releasedAt: T0, autoReleaseAt: null, sendDueAt: T0 });
    expect(initialIssueState('REVIEW', null, T0)).toEqual({ status: 'PENDING_REVIEW', releasedAt: null, autoReleaseAt: null, sendDueAt: null });
    expect(initialIssueState('REVIEW', 30, T0).autoReleaseAt).toEqual(new Date(T0.getTime() + 30 * 60_000));
  });
});

describe('issueSubject', () => {
  const n = { name: 'Digest', feedTitle: 'The Blog', siteUrl: null };
  it('renders subjectPattern with items and newsletter', async () => {
    expect(await issueSubject({ ...n, subjectPattern: '{{ newsletter.feedTitle }}: {{ items[0].title }} (+{{ items.size | minus: 1 }})' }, [item(1), item(2)])).toBe('The Blog: Item 1 (+1)');
  });
  it('falls back to the name when the pattern renders blank or fails', async () => {
    expect(await issueSubject({ ...n, subjectPattern: '{{ nothing }}' }, [item(1)])).toBe('Digest');
    expect(await issueSubject({ ...n, subjectPattern: '{{ items[0].title ' }, [item(1)])).toBe('Digest');
  });
  it('an item summary (HTML) reads as text in the subject', async () => {
    expect(await issueSubject({ ...n, subjectPattern: '{{ items[0].summary }}' }, [item(1, 0, { summary: '<p>Fresh <b>trout</b> &amp; chips</p>' })])).toBe('Fresh trout & chips');
  });
  it('an older newsletter\'s file tags and heap bombs fall back to the name: no file is read, the process is not at risk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rss-subject-'));
    const file = path.join(dir, 'secret.liquid');
    fs.writeFileSync(file, 'SECRET');
    const cwd = process.cwd();
    try {
      // Relative and absolute names, from the directory that holds the file (liquidjs' default root is the cwd).
      process.chdir(dir);
      for (const subjectPattern of [`{% render "${file}" %}`, '{% render "secret" %}', '{% include "secret.liquid" %}', '{% layout "secret" %}x']) {
        expect(await issueSubject({ ...n, subjectPattern }, [item(1)])).toBe('Digest');
      }
    } finally {
      process.chdir(cwd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const heapBefore = process.memoryUsage().heapUsed;
    expect(await issueSubject({ ...n, subjectPattern: '{{ (1..30000000) | join: "," }}' }, [item(1)])).toBe('Digest');
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('issueValues', () => {
  it('marks item HTML as trusted, sanitized again (items stored before the sanitizer)', () => {
    const legacy = item(1, 0, { summary: '<p onclick="x()">Hi<script>alert(1)</script></p><img src="https://t.example/p.gif" width="1" height="1">', content: '' });
    const { values, trustedHtml } = takeHtmlValues(issueValues({ name: 'Digest', feedTitle: null, siteUrl: null }, [legacy]));
    const [rendered] = values.items as Array<Record<string, unknown>>;
    expect(rendered).toMatchObject({ title: 'Item 1', summary: '<p>Hi</p>', content: '' });
    expect([...trustedHtml]).toEqual(['<p>Hi</p>']);
  });
});

describe('checkIssueTemplates (the test render at save)', () => {
  const settings = { name: 'Digest', feedTitle: null, siteUrl: null, cssContent: '', maxItemsPerIssue: 10 };
  const refusal = async (over: Partial<Parameters<typeof checkIssueTemplates>[0]>) => {
    try {
      await checkIssueTemplates({ ...settings, subjectPattern: 's', htmlContent: '<p>h</p>', ...over });
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      return { errorId: (err as DomainError).errorId, paths: (err as DomainError).details?.map((d) => d.path), message: (err as DomainError).message };
    }
    throw new Error('accepted');
  };

  it('accepts an ordinary newsletter', async () => {
    await expect(checkIssueTemplates({
      ...settings,
      subjectPattern: '{{ newsletter.name }}: {{ items[0].title }} for {{ subscriber.firstName }}',
      htmlContent: '{% for item in items %}<h2><a href="{{ item.link }}">{{ item.title }}</a></h2>{{ item.summary }}{% endfor %}<a href="{{ links.unsubscribe }}">Unsubscribe</a>',
      cssContent: 'h2 { color: #123; }',
    })).resolves.toBeUndefined();
  });

  it('refuses a heap bomb, size doubling and deep nesting: 422 template_render_failed naming the member', async () => {
    expect(await refusal({ subjectPattern: '{{ (1..30000000) | join: "," }}' })).toMatchObject({ errorId: 'template_render_failed', paths: ['body.subjectPattern'] });
    const doubling = '{% assign s = "xx" %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s.size }}';
    expect(await refusal({ htmlContent: doubling })).toMatchObject({ errorId: 'template_render_failed', paths: ['body.htmlContent'] });
    const nested = '{% for a in (1..100000) %}{% for b in (1..100000) %}{% for c in (1..100000) %}x{% endfor %}{% endfor %}{% endfor %}';
    expect(await refusal({ htmlContent: nested })).toMatchObject({ errorId: 'template_render_failed', paths: ['body.htmlContent'] });
  });

  it('renders as many items as an issue holds: a template fine for one item and too big for ten is refused', async () => {
    // About 14,000 characters per item: one item renders, 100 pass the output limit (1 MiB).
    const big = '{% assign row = (1..3000) | join: "," %}{% for item in items %}<p>{{ item.title }}: {{ row }}</p>{% endfor %}';
    expect(await refusal({ htmlContent: big, maxItemsPerIssue: 100 })).toMatchObject({ errorId: 'template_render_failed', paths: ['body.htmlContent'] });
    await expect(checkIssueTemplates({ ...settings, subjectPattern: 's', htmlContent: big, maxItemsPerIssue: 1 })).resolves.toBeUndefined();
  });
});
