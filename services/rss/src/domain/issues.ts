// When a newsletter's new items become an issue (the API contract "RSS newsletters": INSTANT, SCHEDULE,
// THRESHOLD, maxItemsPerIssue carry-over, thresholdMaxAgeDays) and what the issue holds. Pure.
import { compiledTemplate, htmlValue, renderTemplate, SAMPLE_READER, takeHtmlValues, TemplateError, type HtmlValue } from '@mailer/templates';
import { invalid } from '@mailer/kit';
import { sanitizeItemHtml, unseenItems, type FeedItem } from './feed';
import { sanitizeFeedHtml } from './feed-html';
import type { Newsletter, ReleasePolicy } from './newsletter';

/** An item as this service keeps it (the feed reader's FeedItem, without its parsing details). */
export interface ItemSnapshot {
  /** Identity: guid, else link, else a hash of title and date (the feed reader's itemKey). */
  key: string;
  guid: string;
  title: string;
  link: string;
  publishedAt: Date | null;
  summary: string;
  content: string;
  author: string;
  imageUrl: string;
}

/** An item as a read of the feed gives it: its HTML still the feed's own (FeedItem.untrustedHtml). */
export type ReadItem = Omit<ItemSnapshot, 'summary' | 'content'> & Pick<FeedItem, 'untrustedHtml'>;

/** The item as it is kept, shown and mailed: its HTML sanitized. */
export function cleanItem({ untrustedHtml, ...item }: ReadItem): ItemSnapshot {
  const { summary, content } = sanitizeItemHtml(untrustedHtml);
  return { ...item, summary: summary ?? '', content: content ?? '' };
}

/** An item found by a poll and not yet in an issue. */
export interface PendingItem extends ItemSnapshot {
  foundAt: Date;
}

export type IssueStatus = 'PENDING_REVIEW' | 'RELEASED' | 'SENDING' | 'SENT' | 'DISCARDED' | 'FAILED';

export interface Issue {
  id: string;
  accountId: string;
  newsletterId: string;
  status: IssueStatus;
  items: ItemSnapshot[];
  subject: string;
  createdAt: Date;
  releasedAt: Date | null;
  sentAt: Date | null;
  recipientCount: number;
  deliveredCount: number;
  /** PENDING_REVIEW with reviewAutoReleaseMinutes: when the auto-release poller releases it. */
  autoReleaseAt: Date | null;
  /** RELEASED or SENDING: when the send poller (re)starts queueing its mail. */
  sendDueAt: Date | null;
  /** SENDING: the audience cursor after the last page queued ('' before the first page). */
  sendCursor: string;
  /** Why the last try to queue its mail failed (SENDING while retried, FAILED); null once a page is queued. */
  lastError: string | null;
  /** Tries in a row that failed for a reason retrying alone cannot fix; the send stops (FAILED) at the limit. */
  sendFailures: number;
}

/** What the newsletter has already seen: item keys, and links (the changed-guid rule). */
export interface SeenItems {
  keys: ReadonlySet<string>;
  links: ReadonlySet<string>;
}

/**
 * The items of a read that are new, in feed order, each once: the feed reader's rule (domain/feed.ts
 * unseenItems: a changed guid whose link was seen is not new, unless the link is shared by a seen
 * item the feed still lists), applied to snapshots, whose absent link is ''.
 */
export function newItems<T extends Pick<ItemSnapshot, 'key' | 'link'>>(items: readonly T[], seen: SeenItems): T[] {
  const asFeedItems = items.map((item, index) => ({ key: item.key, link: item.link === '' ? null : item.link, index }));
  const unseen = unseenItems(asFeedItems as unknown as FeedItem[], seen) as unknown as typeof asFeedItems;
  return unseen.map((u) => items[u.index]);
}

const DAY_MS = 86_400_000;
const timeOf = (item: PendingItem) => (item.publishedAt ?? item.foundAt).getTime();

export interface IssueDecision {
  /** The items of the issue to build now (newest first), or none. */
  issueItems: PendingItem[];
  /** THRESHOLD: items too old to wait any longer; they leave the queue unsent. */
  expired: PendingItem[];
}

/**
 * Whether the waiting items make an issue now. `tick`: a SCHEDULE tick is due (ignored by the other
 * modes). The newest `maxItemsPerIssue` items go in; the rest stay waiting for the next issue.
 */
export function decideIssue(
  newsletter: Pick<Newsletter, 'triggerMode' | 'minItems' | 'thresholdMaxAgeDays' | 'maxItemsPerIssue'>,
  pending: readonly PendingItem[],
  at: { now: Date; tick: boolean },
): IssueDecision {
  let waiting = [...pending];
  let expired: PendingItem[] = [];
  if (newsletter.triggerMode === 'THRESHOLD' && newsletter.thresholdMaxAgeDays !== null) {
    const oldest = at.now.getTime() - newsletter.thresholdMaxAgeDays * DAY_MS;
    expired = waiting.filter((i) => timeOf(i) < oldest);
    waiting = waiting.filter((i) => timeOf(i) >= oldest);
  }
  const due =
    waiting.length > 0 &&
    (newsletter.triggerMode === 'INSTANT' ||
      (newsletter.triggerMode === 'SCHEDULE' && at.tick) ||
      (newsletter.triggerMode === 'THRESHOLD' && waiting.length >= (newsletter.minItems ?? 1)));
  if (!due) return { issueItems: [], expired };
  // Stable: equal times keep the queue's order (the feed's, newest first, within one read).
  const newestFirst = waiting.sort((a, b) => timeOf(b) - timeOf(a));
  return { issueItems: newestFirst.slice(0, newsletter.maxItemsPerIssue), expired };
}

/** A new issue's state: AUTO releases at once, REVIEW waits (until auto-release when set). */
export function initialIssueState(policy: ReleasePolicy, reviewAutoReleaseMinutes: number | null, now: Date): Pick<Issue, 'status' | 'releasedAt' | 'autoReleaseAt' | 'sendDueAt'> {
  if (policy === 'AUTO') return { status: 'RELEASED', releasedAt: now, autoReleaseAt: null, sendDueAt: now };
  return {
    status: 'PENDING_REVIEW',
    releasedAt: null,
    autoReleaseAt: reviewAutoReleaseMinutes ? new Date(now.getTime() + reviewAutoReleaseMinutes * 60_000) : null,
    sendDueAt: null,
  };
}

/**
 * An item's HTML field for templates: trusted HTML (printed as markup in the html part, as text in the
 * subject). Sanitized when the item was found (cleanItem); sanitized again here (the result is the same
 * for clean HTML) because items stored before the sanitizer existed may still wait in a queue or an issue.
 */
const itemHtml = (markup: string, base: string): HtmlValue | '' => {
  const clean = markup ? sanitizeFeedHtml(markup, base || null) : null;
  return clean ? htmlValue(clean) : '';
};

/** The item as templates see it (`title, link, publishedAt, summary, content, author, imageUrl`). */
export const templateItem = (i: ItemSnapshot) => ({
  title: i.title,
  link: i.link,
  publishedAt: i.publishedAt?.toISOString() ?? null,
  summary: itemHtml(i.summary, i.link),
  content: itemHtml(i.content, i.link),
  author: i.author,
  imageUrl: i.imageUrl,
});

/** The newsletter as templates see it. */
const templateNewsletter = (n: Pick<Newsletter, 'name' | 'feedTitle' | 'siteUrl'>) => ({ name: n.name, feedTitle: n.feedTitle, siteUrl: n.siteUrl });

/**
 * The render values of an issue's mail besides `subscriber` (`items` and `newsletter`), as JSON would
 * carry them: item HTML marked as trusted (takeHtmlValues reads the marks).
 */
export const issueValues = (newsletter: Pick<Newsletter, 'name' | 'feedTitle' | 'siteUrl'>, items: readonly ItemSnapshot[]) => ({
  items: items.map(templateItem),
  newsletter: templateNewsletter(newsletter),
});

/** The key of an issue's send at the messaging service: one mail per recipient per key. */
export const issueSendKey = (issueId: string) => `rss-issue:${issueId}`;

type TemplateSettings = Pick<Newsletter, 'name' | 'subjectPattern' | 'htmlContent' | 'cssContent' | 'feedTitle' | 'siteUrl'>;

/** Renders the newsletter's templates with the platform's engine, as the messaging service will. */
function renderIssue(newsletter: TemplateSettings, items: readonly ItemSnapshot[], subscriber: Record<string, unknown>, links: Record<string, unknown> | null) {
  const compiled = compiledTemplate({ subject: newsletter.subjectPattern, html: newsletter.htmlContent, css: newsletter.cssContent });
  const { values, trustedHtml } = takeHtmlValues(issueValues(newsletter, items));
  return renderTemplate(compiled, { substitutionData: values, subscriber, links, trustedHtml });
}

/**
 * The issue's subject from `subjectPattern` with `items` and `newsletter` (no `subscriber`: the list
 * shows one subject per issue; per-recipient subjects are rendered when mail is sent). A pattern that
 * fails to render (an older newsletter's `{% render %}`, a limit) falls back to the newsletter's name
 * rather than losing the issue.
 */
export async function issueSubject(newsletter: Pick<Newsletter, 'name' | 'subjectPattern' | 'feedTitle' | 'siteUrl'>, items: readonly ItemSnapshot[]): Promise<string> {
  try {
    const { subject } = await renderIssue({ ...newsletter, htmlContent: '', cssContent: '' }, items, {}, null);
    const line = subject.replace(/\s+/g, ' ').trim();
    return line === '' ? newsletter.name : line.slice(0, 998);
  } catch {
    return newsletter.name;
  }
}

const SAMPLE_ITEM: ItemSnapshot = {
  key: 'sample',
  guid: 'sample',
  title: 'A sample item',
  link: 'https://feed.example/sample',
  publishedAt: new Date('2026-01-01T00:00:00Z'),
  summary: '<p>The summary of a <a href="https://feed.example/sample">sample item</a>.</p>',
  content: '<p>The content of a sample item.</p>',
  author: 'An author',
  imageUrl: 'https://feed.example/sample.png',
};
const MEMBER_OF_PART: Record<string, string> = { subject: 'subjectPattern', html: 'htmlContent', text: 'htmlContent', css: 'cssContent' };

/**
 * The save-time check of a newsletter's templates: one render of an issue of `maxItemsPerIssue` sample
 * items for a sample reader, with the engine and limits every send uses (render time, memory, output),
 * so a template that cannot render (`(1..30000000) | join`, a string doubled in a loop, loops nested
 * too deep) is refused when it is written, `template_render_failed`, not found at every send.
 */
export async function checkIssueTemplates(newsletter: TemplateSettings & Pick<Newsletter, 'maxItemsPerIssue'>): Promise<void> {
  const items = Array.from({ length: newsletter.maxItemsPerIssue }, (_, i) => ({ ...SAMPLE_ITEM, key: `sample-${i}` }));
  try {
    await renderIssue(newsletter, items, SAMPLE_READER.subscriber, SAMPLE_READER.links);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    const details = err.details.map((d) => ({ path: `body.${MEMBER_OF_PART[d.path] ?? d.path}`, problem: d.problem }));
    throw invalid(err.errorId, `the newsletter's templates fail a test render of an issue: ${err.message}`, details);
  }
}
