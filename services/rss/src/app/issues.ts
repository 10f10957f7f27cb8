// Issue use cases: the list, release and discard (API.md "RSS newsletters"), the auto-release of
// REVIEW issues whose reviewAutoReleaseMinutes passed (the auto-release poller) and the sending of
// released issues (the send poller).
//
// Decisions: release and discard apply to PENDING_REVIEW issues only; any other state is 409
// rss_issue_not_pending_review (a released issue is on its way; a discarded one stays discarded).
import { failedPrecondition, notFound } from '@mailer/kit';
import type { Issue } from '../domain/issues';
import type { IssueRepository } from '../store/issues';
import type { NewsletterRepository } from '../store/newsletters';
import { newsletterNotFound } from './newsletters';
import type { IssueMail } from './ports';
import { domainFact } from '@mailer/nats/facts';
import type { OutboxRepository } from '@mailer/nats';
import type { Store } from '@mailer/store';
import type { Logger } from '@mailer/kit';

export interface IssueDeps {
  newsletters: NewsletterRepository;
  issues: IssueRepository;
  mail: IssueMail;
  store: Store;
  outbox: OutboxRepository;
  /** Wakes the outbox relay after a commit that recorded a fact. */
  notifyOutbox(): void;
  now(): Date;
  /** A released issue is due to be sent at `at`: the send poller is told. */
  wakeSend(at: Date): void;
  /**
   * The send poller's lease on an issue, renewed after every page: after a crash the issue's send
   * resumes once it runs out (a page takes seconds; one slower than the lease is only done twice,
   * which queues nobody twice).
   */
  sendLeaseMs: number;
  logger?: Pick<Logger, 'warn'>;
}

/** After a failed page, the send resumes this much later. */
export const SEND_RETRY_MS = 60_000;

const issueNotFound = (id: string) => notFound('rss_issue_not_found', `no issue with id ${id} exists in this newsletter`);
const notPending = (issue: Issue) => failedPrecondition('rss_issue_not_pending_review', `the issue is ${issue.status}: only a PENDING_REVIEW issue can be released or discarded`);

async function newsletterOf(deps: IssueDeps, accountId: string, newsletterId: string) {
  const n = await deps.newsletters.get(accountId, newsletterId);
  if (!n) throw newsletterNotFound(newsletterId);
  return n;
}

async function issueOf(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<Issue> {
  const issue = await deps.issues.get(accountId, newsletterId, issueId);
  if (!issue) throw issueNotFound(issueId);
  return issue;
}

/**
 * The issues, newest first, with deliveredCount read from the messaging service (it owns the mail).
 * When it does not answer, the list still answers, with the counts last stored (0): a list of issues
 * should not fail because a count is late.
 */
export async function listIssues(deps: IssueDeps, accountId: string, newsletterId: string, pageNumber: number, pageSize: number) {
  await newsletterOf(deps, accountId, newsletterId);
  const page = await deps.issues.page(accountId, newsletterId, pageNumber, pageSize);
  const mailed = page.items.filter((i) => i.status === 'SENDING' || i.status === 'SENT').map((i) => i.id);
  if (!mailed.length) return page;
  try {
    const delivered = await deps.mail.deliveredCounts(accountId, mailed);
    return { ...page, items: page.items.map((i) => (delivered.has(i.id) ? { ...i, deliveredCount: delivered.get(i.id)! } : i)) };
  } catch (err) {
    deps.logger?.warn({ newsletterId, err: (err as Error).message }, 'delivered counts unavailable; the issue list shows the stored counts');
    return page;
  }
}

export async function releaseIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<Issue> {
  await newsletterOf(deps, accountId, newsletterId);
  const issue = await issueOf(deps, accountId, newsletterId, issueId);
  if (issue.status !== 'PENDING_REVIEW') throw notPending(issue);
  const now = deps.now();
  const released = await deps.issues.transition(accountId, newsletterId, issueId, 'PENDING_REVIEW', { status: 'RELEASED', releasedAt: now, sendDueAt: now });
  if (!released) throw notPending(await issueOf(deps, accountId, newsletterId, issueId));
  deps.wakeSend(now);
  return released;
}

export async function discardIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<Issue> {
  await newsletterOf(deps, accountId, newsletterId);
  const issue = await issueOf(deps, accountId, newsletterId, issueId);
  if (issue.status !== 'PENDING_REVIEW') throw notPending(issue);
  const discarded = await deps.issues.transition(accountId, newsletterId, issueId, 'PENDING_REVIEW', { status: 'DISCARDED' });
  if (!discarded) throw notPending(await issueOf(deps, accountId, newsletterId, issueId));
  return discarded;
}

/** The review time of a claimed issue is over: released as if by hand (no-op when it left PENDING_REVIEW meanwhile). */
export async function autoReleaseIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<void> {
  const now = deps.now();
  const released = await deps.issues.transition(accountId, newsletterId, issueId, 'PENDING_REVIEW', { status: 'RELEASED', releasedAt: now, sendDueAt: now });
  if (released) deps.wakeSend(now);
}

/**
 * Use case SendIssue (the send poller, on a claimed RELEASED or SENDING issue): RELEASED becomes
 * SENDING, then the audience is queued page by page, the cursor and count stored after each page (a
 * restart resumes at the stored cursor; a page asked again queues nobody twice). The last page makes
 * the issue SENT and records `rss.issue_sent` in the same transaction. A failed page leaves the issue
 * SENDING, due again after SEND_RETRY_MS.
 */
export async function sendIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<void> {
  const [newsletter, found] = await Promise.all([deps.newsletters.get(accountId, newsletterId), deps.issues.get(accountId, newsletterId, issueId)]);
  if (!newsletter || !found || (found.status !== 'RELEASED' && found.status !== 'SENDING')) {
    if (found) await deps.issues.setSendDue(accountId, newsletterId, issueId, null);
    return;
  }
  let issue: Issue | null = found.status === 'RELEASED'
    ? await deps.issues.transition(accountId, newsletterId, issueId, 'RELEASED', { status: 'SENDING' })
    : found;
  try {
    while (issue) {
      const page = await deps.mail.queuePage(issue, newsletter, issue.sendCursor);
      const recipientCount = issue.recipientCount + page.recipientCount;
      if (page.next === '') {
        await completeSend(deps, issue, recipientCount);
        return;
      }
      const leaseUntil = new Date(deps.now().getTime() + deps.sendLeaseMs);
      issue = await deps.issues.recordSendProgress(accountId, newsletterId, issueId, issue.sendCursor, { sendCursor: page.next, recipientCount, leaseUntil });
    }
  } catch (err) {
    deps.logger?.warn({ issueId, accountId, err: (err as Error).message }, 'queueing an issue\'s mail failed; resumed later from the last queued page');
    await deps.issues.setSendDue(accountId, newsletterId, issueId, new Date(deps.now().getTime() + SEND_RETRY_MS));
  }
}

async function completeSend(deps: IssueDeps, issue: Issue, recipientCount: number): Promise<void> {
  const sentAt = deps.now();
  await deps.store.transaction(async (tx) => {
    const done = await deps.issues.completeSend(issue.accountId, issue.newsletterId, issue.id, issue.sendCursor, { sentAt, recipientCount }, tx);
    if (!done) return;
    const fact = domainFact({
      type: 'rss.issue_sent',
      accountId: issue.accountId,
      occurredAt: sentAt.toISOString(),
      newsletterId: issue.newsletterId,
      issueId: issue.id,
      itemCount: issue.items.length,
      recipientCount,
    });
    // The issue's id names the fact: however often the last page is completed, one fact.
    await deps.outbox.record(tx, [{ ...fact, id: `rss.issue_sent:${issue.id}` }]);
  });
  deps.notifyOutbox();
}
