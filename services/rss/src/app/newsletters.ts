// Newsletter use cases, one per RPC of RssNewsletterService (the API contract "RSS newsletters").
//
// Decisions (published in the OpenAPI document, gateway/src/openapi/rss/newsletters.ts):
// - Create reads the feed once (a failure is the feed error, nothing is created) and marks every
//   current item seen: the baseline. feedTitle, siteUrl and feedUrl are filled from the feed when absent.
// - PUT replaces the settings; a changed sourceUrl is read and baselined like a create (the new
//   feed's back catalogue is never mailed). Status, queue and issues are kept.
// - pause is idempotent; resume of an ACTIVE newsletter is 409 rss_newsletter_not_paused (a
//   rebaseline there would silently drop queued reading). resume without rebaseline polls at once,
//   so items published while paused are sent; with rebaseline they are marked seen first.
// - subjectPattern / htmlContent / cssContent are test-rendered as an issue of maxItemsPerIssue sample
//   items before any peer or feed is asked (domain/issues.ts checkIssueTemplates): a template that
//   passes a render limit is 422 template_render_failed at save, never discovered at send.
// - check while PAUSED is 409 rss_newsletter_paused; check while another poll of the newsletter
//   runs is 409 rss_check_in_progress (after a short wait).
import { DomainError, failedPrecondition, GrpcStatus, invalid, notFound, TIME_LIMITS } from '@mailer/kit';
import type { Newsletter, NewsletterRequest, NewsletterSettings } from '../domain/newsletter';
import { LIMITS, resolveNewsletterRequest } from '../domain/newsletter';
import { checkIssueTemplates, cleanItem, type ItemSnapshot } from '../domain/issues';
import { asFeedDomainError } from './feed-errors';
import { nextTickOf, pollNewsletter, type PollDeps, type PollOutcome } from './poll';
import type { AccountCatalog, FeedSnapshot } from './ports';

export interface NewsletterDeps extends PollDeps {
  catalog: AccountCatalog;
  /** A newsletter is due at `at` (resume): the poller is told. */
  wakePoller(at: Date): void;
}

/** How long a manual check waits for a poll of the same newsletter to finish. */
const CHECK_WAIT_MS = TIME_LIMITS.feedCheckWait;
/** The lease a poll holds: well above a feed read's 10 s timeout plus redirects. */
export const POLL_LEASE_MS = 60_000;

export const newsletterNotFound = (id: string) => notFound('rss_newsletter_not_found', `no RSS newsletter with id ${id} exists in the account`);

async function existing(deps: Pick<NewsletterDeps, 'newsletters'>, accountId: string, id: string): Promise<Newsletter> {
  const n = await deps.newsletters.get(accountId, id);
  if (!n) throw newsletterNotFound(id);
  return n;
}

/** A peer's not-found for a member of the body, with the member named in details. */
function atPath(err: unknown, path: string): unknown {
  if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return new DomainError(err.code, err.errorId, err.message, [{ path, problem: 'not found in the account' }]);
  return err;
}

async function checkReferences(deps: NewsletterDeps, accountId: string, s: NewsletterSettings): Promise<void> {
  const rejectAt = (path: string) => (err: unknown) => Promise.reject(atPath(err, path));
  await Promise.all([
    deps.catalog.requireSenderProfile(accountId, s.senderProfileId).catch(rejectAt('body.senderProfileId')),
    s.segmentId && deps.catalog.requireSegment(accountId, s.segmentId).catch(rejectAt('body.segmentId')),
    s.topicId && deps.catalog.requireTopic(accountId, s.topicId).catch(rejectAt('body.topicId')),
  ]);
}

/** One read of the feed for a baseline; feed failures answer as the feed error on `path`. */
async function readForBaseline(deps: NewsletterDeps, url: string, path: string) {
  try {
    const read = await deps.feeds.read(url, { etag: null, lastModified: null });
    if (read.kind !== 'feed') throw new Error('an unconditional read answered not_modified');
    return read;
  } catch (err) {
    throw asFeedDomainError(err, path);
  }
}

const newestOf = (feed: FeedSnapshot): Date | null => {
  const t = Math.max(...feed.items.map((i) => i.publishedAt?.getTime() ?? -Infinity));
  return Number.isFinite(t) ? new Date(t) : null;
};

/** A newsletter as answered: with the number of items waiting for its next issue. */
export interface NewsletterView {
  newsletter: Newsletter;
  pendingItemCount: number;
}

/** The answer for one newsletter a use case returned. */
export const newsletterView = async (deps: Pick<NewsletterDeps, 'items'>, newsletter: Newsletter): Promise<NewsletterView> => ({
  newsletter,
  pendingItemCount: await deps.items.countPending(newsletter.accountId, newsletter.id),
});

/** The account's newsletters with their pending counts: two queries whatever the number of newsletters. */
export async function listNewsletters(deps: Pick<NewsletterDeps, 'newsletters' | 'items'>, accountId: string): Promise<NewsletterView[]> {
  const list = await deps.newsletters.list(accountId);
  const pending = await deps.items.countPendingByNewsletter(accountId, list.map((n) => n.id));
  return list.map((newsletter) => ({ newsletter, pendingItemCount: pending.get(newsletter.id) ?? 0 }));
}
export const getNewsletter = (deps: Pick<NewsletterDeps, 'newsletters'>, accountId: string, id: string) => existing(deps, accountId, id);

export async function createNewsletter(deps: NewsletterDeps, accountId: string, req: NewsletterRequest): Promise<Newsletter> {
  const settings = resolveNewsletterRequest(req);
  await checkIssueTemplates(settings);
  await checkReferences(deps, accountId, settings);
  const read = await readForBaseline(deps, settings.sourceUrl, 'body.sourceUrl');
  const now = deps.now();
  const newsletter: Newsletter = {
    id: deps.newId(),
    accountId,
    ...settings,
    feedTitle: settings.feedTitle ?? (read.feed.title || null),
    siteUrl: settings.siteUrl ?? read.feed.siteUrl,
    feedUrl: settings.feedUrl ?? read.feed.feedUrl ?? read.url,
    status: 'ACTIVE',
    lastCheckedAt: now,
    lastItemPublishedAt: newestOf(read.feed),
    lastError: null,
    etag: read.etag,
    lastModified: read.lastModified,
    nextPollAt: new Date(now.getTime() + deps.pollIntervalMs),
    nextTickAt: nextTickOf(settings, now),
    createdAt: now,
    updatedAt: now,
  };
  // The newsletter and its baseline commit together: it never polls without one.
  return deps.store.transaction(async (tx) => {
    await deps.items.markSeen(accountId, newsletter.id, read.feed.items, now, { tx });
    return deps.newsletters.create(newsletter, { tx });
  });
}

export async function updateNewsletter(deps: NewsletterDeps, accountId: string, id: string, req: NewsletterRequest): Promise<Newsletter> {
  const previous = await existing(deps, accountId, id);
  const settings = resolveNewsletterRequest(req);
  await checkIssueTemplates(settings);
  await checkReferences(deps, accountId, settings);
  const now = deps.now();
  const scheduleChanged = settings.triggerMode !== previous.triggerMode || settings.schedule !== previous.schedule;
  const nextTickAt = previous.status !== 'ACTIVE' ? null : scheduleChanged ? nextTickOf(settings, now) : previous.nextTickAt;
  if (settings.sourceUrl !== previous.sourceUrl) {
    const read = await readForBaseline(deps, settings.sourceUrl, 'body.sourceUrl');
    await deps.items.markSeen(accountId, id, read.feed.items, now);
    settings.feedTitle ??= read.feed.title || null;
    settings.siteUrl ??= read.feed.siteUrl;
    settings.feedUrl ??= read.feed.feedUrl ?? read.url;
    await deps.newsletters.recordPoll(accountId, id, { etag: read.etag, lastModified: read.lastModified, lastError: null, lastCheckedAt: now });
  }
  const updated = await deps.newsletters.update(accountId, id, { ...settings, updatedAt: now, nextTickAt });
  if (!updated) throw newsletterNotFound(id);
  return updated;
}

export async function deleteNewsletter(deps: NewsletterDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.newsletters.delete(accountId, id))) throw newsletterNotFound(id);
  await Promise.all([deps.items.deleteAll(accountId, id), deps.issues.deleteAll(accountId, id)]);
}

/** A feed as the preview shows it: every item, its HTML sanitized. */
export type FeedPreview = Omit<FeedSnapshot, 'items'> & { items: ItemSnapshot[] };

export async function previewFeed(deps: Pick<NewsletterDeps, 'feeds'>, url: string): Promise<FeedPreview> {
  const trimmed = url.trim();
  let ok = false;
  try {
    const u = new URL(trimmed);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && trimmed.length <= LIMITS.urlMax;
  } catch {
    ok = false;
  }
  if (!ok) throw invalid('validation_failed', 'url must be an absolute http(s) URL', [{ path: 'body.url', problem: `an absolute http(s) URL of at most ${LIMITS.urlMax} characters` }]);
  try {
    const read = await deps.feeds.read(trimmed, { etag: null, lastModified: null });
    if (read.kind !== 'feed') throw new Error('an unconditional read answered not_modified');
    return { ...read.feed, items: read.feed.items.map(cleanItem) };
  } catch (err) {
    throw asFeedDomainError(err, 'body.url');
  }
}

/** Polls now, as the schedule would. Feed failures are recorded as lastError and answered as the feed error. */
export async function checkNewsletter(deps: NewsletterDeps, accountId: string, id: string): Promise<PollOutcome> {
  let newsletter = await existing(deps, accountId, id);
  if (newsletter.status !== 'ACTIVE') throw failedPrecondition('rss_newsletter_paused', 'the newsletter is paused: resume it to check its feed');
  const deadline = Date.now() + CHECK_WAIT_MS;
  while (!(await deps.newsletters.lease(accountId, id, deps.now(), POLL_LEASE_MS))) {
    if (Date.now() > deadline) throw failedPrecondition('rss_check_in_progress', 'the feed of this newsletter is being read right now; retry in a few seconds');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Read again under the lease: the poll that held it may have changed validators and status.
  newsletter = await existing(deps, accountId, id);
  const outcome = await pollNewsletter(deps, newsletter, { tickDue: false });
  if (outcome.failure) throw asFeedDomainError(outcome.failure, 'sourceUrl');
  return outcome;
}

export async function pauseNewsletter(deps: NewsletterDeps, accountId: string, id: string): Promise<Newsletter> {
  const n = await existing(deps, accountId, id);
  if (n.status === 'PAUSED') return n;
  const paused = await deps.newsletters.setStatus(accountId, id, 'ACTIVE', { status: 'PAUSED', updatedAt: deps.now(), nextPollAt: null, nextTickAt: null });
  return paused ?? existing(deps, accountId, id);
}

export async function resumeNewsletter(deps: NewsletterDeps, accountId: string, id: string, rebaseline: boolean): Promise<Newsletter> {
  const n = await existing(deps, accountId, id);
  if (n.status !== 'PAUSED') throw failedPrecondition('rss_newsletter_not_paused', 'the newsletter is not paused');
  const now = deps.now();
  if (rebaseline) {
    // Everything in the feed now was published while paused (or before): seen, never sent. A feed
    // that cannot be read leaves the newsletter paused.
    const read = await readForBaseline(deps, n.sourceUrl, 'sourceUrl');
    await deps.items.markSeen(accountId, id, read.feed.items, now);
    await deps.newsletters.recordPoll(accountId, id, { etag: read.etag, lastModified: read.lastModified, lastError: null, lastCheckedAt: now, lastItemPublishedAt: newestOf(read.feed) ?? n.lastItemPublishedAt });
  }
  // Without rebaseline the poller reads at once, so what was published while paused goes out.
  const nextPollAt = rebaseline ? new Date(now.getTime() + deps.pollIntervalMs) : now;
  const resumed = await deps.newsletters.setStatus(accountId, id, 'PAUSED', { status: 'ACTIVE', updatedAt: now, nextPollAt, nextTickAt: nextTickOf(n, now) });
  if (!resumed) throw failedPrecondition('rss_newsletter_not_paused', 'the newsletter is not paused');
  deps.wakePoller(nextPollAt);
  return resumed;
}

export const newslettersUsingSenderProfile = (deps: Pick<NewsletterDeps, 'newsletters'>, accountId: string, senderProfileId: string) =>
  deps.newsletters.naming(accountId, 'senderProfileId', senderProfileId);
