// Use case PollNewsletter: read the feed once and act on what is new, as the poller does when a
// newsletter is due and as POST /rss-newsletters/{id}/check does now. New items queue (PENDING);
// the trigger mode decides whether the queue makes an issue (domain/issues.ts); an issue is
// RELEASED at once (AUTO, then sent by the send poller) or waits PENDING_REVIEW (REVIEW).
//
// A failing read records `lastError` and changes nothing else: no partial issue, and the next poll
// retries. The caller holds the newsletter's lease; the outcome record releases it.
import { failedPrecondition, type Logger } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { cleanItem, decideIssue, initialIssueState, issueSubject, newItems, type Issue } from '../domain/issues';
import type { Newsletter } from '../domain/newsletter';
import { nextTick, parseSchedule } from '../domain/schedule';
import type { IssueRepository } from '../store/issues';
import type { ItemRepository } from '../store/items';
import type { NewsletterRepository, PollChanges } from '../store/newsletters';
import { feedFailure } from './feed-errors';
import type { FeedReader } from './ports';

export interface PollDeps {
  store: Store;
  newsletters: NewsletterRepository;
  items: ItemRepository;
  issues: IssueRepository;
  feeds: FeedReader;
  pollIntervalMs: number;
  now(): Date;
  newId(): string;
  /** An issue waits for review until `at`: the auto-release poller is told. */
  wakeAutoRelease(at: Date): void;
  /** A released issue's mail is due at `at`: the send poller is told. */
  wakeSend(at: Date): void;
  logger?: Pick<Logger, 'warn'>;
}

export interface PollOutcome {
  newItems: number;
  issueId: string | null;
  /** The read failed: the feed error's code and text (also recorded as lastError). */
  failure: { code: string; message: string } | null;
}

/** The next cron tick of a SCHEDULE newsletter after `after`; null for the other modes. */
export function nextTickOf(n: Pick<Newsletter, 'triggerMode' | 'schedule'>, after: Date): Date | null {
  if (n.triggerMode !== 'SCHEDULE' || !n.schedule) return null;
  return nextTick(parseSchedule(n.schedule), after);
}

/**
 * Polls one newsletter. `tickDue`: the poller found its SCHEDULE tick due (a manual check never
 * ticks: it collects items, and the schedule sends them).
 */
export async function pollNewsletter(deps: PollDeps, newsletter: Newsletter, opts: { tickDue: boolean }): Promise<PollOutcome> {
  const now = deps.now();
  const { accountId, id } = newsletter;
  const timing: PollChanges = { lastCheckedAt: now, nextPollAt: new Date(now.getTime() + deps.pollIntervalMs) };
  // A tick is spent whether or not the read succeeds: its items wait for the next tick.
  if (opts.tickDue) timing.nextTickAt = nextTickOf(newsletter, now);
  let read;
  try {
    read = await deps.feeds.read(newsletter.sourceUrl, { etag: newsletter.etag, lastModified: newsletter.lastModified });
  } catch (err) {
    const failure = feedFailure(err);
    if (!failure) {
      await deps.newsletters.recordPoll(accountId, id, { nextPollAt: timing.nextPollAt });
      throw err;
    }
    await deps.newsletters.recordPoll(accountId, id, { ...timing, lastError: `${failure.code}: ${failure.message}` });
    return { newItems: 0, issueId: null, failure };
  }
  let found = 0;
  const changes: PollChanges = { ...timing, lastError: null };
  if (read.kind === 'feed') {
    const seen = await deps.items.seen(accountId, id);
    // Only what is new is sanitized (and kept): an unchanged feed costs its parse, not its HTML again.
    const fresh = newItems(read.feed.items, seen).map(cleanItem);
    found = fresh.length;
    await deps.items.addPending(accountId, id, fresh, now);
    changes.etag = read.etag;
    changes.lastModified = read.lastModified;
    const newest = Math.max(...read.feed.items.map((i) => i.publishedAt?.getTime() ?? -Infinity), newsletter.lastItemPublishedAt?.getTime() ?? -Infinity);
    if (Number.isFinite(newest)) changes.lastItemPublishedAt = new Date(newest);
    if (!newsletter.feedTitle && read.feed.title) changes.feedTitle = read.feed.title;
    if (!newsletter.siteUrl && read.feed.siteUrl) changes.siteUrl = read.feed.siteUrl;
    if (!newsletter.feedUrl) changes.feedUrl = read.feed.feedUrl ?? read.url;
  }
  let issue: Issue | null;
  try {
    issue = await buildIssue(deps, { ...newsletter, ...changes } as Newsletter, { now, tick: opts.tickDue });
  } finally {
    // Recorded (and the lease released) even when the issue could not be made: its items stay queued.
    await deps.newsletters.recordPoll(accountId, id, changes);
  }
  if (issue) await afterIssue(deps, issue, newsletter);
  return { newItems: found, issueId: issue?.id ?? null, failure: null };
}

/** The queue as the trigger mode sees it now: expired items leave, and maybe an issue is made. */
async function buildIssue(deps: PollDeps, newsletter: Newsletter, at: { now: Date; tick: boolean }): Promise<Issue | null> {
  const { accountId, id } = newsletter;
  const pending = await deps.items.pending(accountId, id);
  const decision = decideIssue(newsletter, pending, at);
  if (decision.expired.length) await deps.items.settle(accountId, id, decision.expired.map((i) => i.key));
  if (decision.issueItems.length === 0) return null;
  const items = decision.issueItems.map(({ foundAt: _foundAt, ...item }) => item);
  const issue: Issue = {
    id: deps.newId(),
    accountId,
    newsletterId: id,
    items,
    subject: await issueSubject(newsletter, items),
    createdAt: at.now,
    sentAt: null,
    recipientCount: 0,
    deliveredCount: 0,
    sendCursor: '',
    lastError: null,
    sendFailures: 0,
    ...initialIssueState(newsletter.releasePolicy, newsletter.reviewAutoReleaseMinutes, at.now),
  };
  // The items leave the queue in the same write that makes the issue: an item is in one issue at most.
  return deps.store.transaction(async (tx) => {
    const settled = await deps.items.settle(accountId, id, items.map((i) => i.key), { tx });
    if (settled !== items.length) throw failedPrecondition('rss_check_in_progress', 'another poll of this newsletter took these items');
    return deps.issues.create(issue, { tx });
  });
}

/** A new issue: REVIEW waits (auto-release armed), AUTO is due to the sender at once. */
async function afterIssue(deps: PollDeps, issue: Issue, _newsletter: Newsletter): Promise<void> {
  if (issue.autoReleaseAt) deps.wakeAutoRelease(issue.autoReleaseAt);
  if (issue.sendDueAt) deps.wakeSend(issue.sendDueAt);
}

/**
 * The poller's work on one due newsletter it claimed: a poll, with the SCHEDULE tick when that is
 * what came due. A newsletter paused meanwhile only gives its lease back.
 */
export async function pollDueNewsletter(deps: PollDeps, accountId: string, newsletterId: string): Promise<PollOutcome | null> {
  const n = await deps.newsletters.get(accountId, newsletterId);
  if (!n) return null;
  if (n.status !== 'ACTIVE') {
    await deps.newsletters.recordPoll(accountId, newsletterId, {});
    return null;
  }
  const tickDue = n.triggerMode === 'SCHEDULE' && n.nextTickAt !== null && n.nextTickAt <= deps.now();
  return pollNewsletter(deps, n, { tickDue });
}
