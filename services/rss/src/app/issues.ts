// Issue use cases: the list, release and discard (the API contract "RSS newsletters"), the auto-release of
// REVIEW issues whose reviewAutoReleaseMinutes passed (the auto-release poller) and the sending of
// released issues (the send poller).
//
// Decisions:
// - Release and discard apply to PENDING_REVIEW and FAILED issues; any other state is 409
//   rss_issue_not_pending_review (a released issue is on its way; a discarded one stays discarded).
// - A try to queue a page fails: when the messaging service (or a service it asks) did not answer, the
//   send is retried without limit (the outage is not the customer's to fix); any other failure (a
//   segment, topic or sender profile gone, a template that cannot render, a bug) counts as a failed
//   try. After `sendMaxAttempts` failed tries in a row the issue is FAILED; lastError says why either
//   way. A queued page resets the count.
// - Releasing a FAILED issue again resumes its send at its cursor: the pages already queued are not
//   read again, and as every mail of an issue is keyed by (issue, subscriber) nobody gets it twice.
import { DomainError, failedPrecondition, GrpcStatus, notFound } from '@mailer/kit';
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
  /** After a failed page, the send resumes this much later. */
  sendRetryMs: number;
  /** Failed tries in a row after which the issue is FAILED (RSS_SEND_MAX_ATTEMPTS). */
  sendMaxAttempts: number;
  /** An issue became FAILED; `reason` is one of SEND_FAILURE_REASONS (a metric's label). */
  issueFailed?(reason: SendFailureReason): void;
  logger?: Pick<Logger, 'warn'>;
}

/** Why issues fail, as a metric counts them: the errorIds of the causes a customer can fix, else `other`. */
export const SEND_FAILURE_REASONS = ['segment_not_found', 'topic_not_found', 'sender_profile_not_found', 'template_render_failed', 'template_syntax_error', 'other'] as const;
export type SendFailureReason = (typeof SEND_FAILURE_REASONS)[number];

const issueNotFound = (id: string) => notFound('rss_issue_not_found', `no issue with id ${id} exists in this newsletter`);
const notPending = (issue: Issue) => failedPrecondition('rss_issue_not_pending_review', `the issue is ${issue.status}: only a PENDING_REVIEW or FAILED issue can be released or discarded`);
const releasable = (issue: Issue) => issue.status === 'PENDING_REVIEW' || issue.status === 'FAILED';

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

/** PENDING_REVIEW: released now. FAILED: released again, its send resuming at its cursor with a fresh count of tries. */
export async function releaseIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<Issue> {
  await newsletterOf(deps, accountId, newsletterId);
  const issue = await issueOf(deps, accountId, newsletterId, issueId);
  if (!releasable(issue)) throw notPending(issue);
  const now = deps.now();
  const again = issue.status === 'FAILED';
  const released = await deps.issues.transition(accountId, newsletterId, issueId, issue.status, {
    status: 'RELEASED',
    releasedAt: again ? issue.releasedAt : now,
    sendDueAt: now,
    ...(again ? { lastError: null, sendFailures: 0 } : {}),
  });
  if (!released) throw notPending(await issueOf(deps, accountId, newsletterId, issueId));
  deps.wakeSend(now);
  return released;
}

export async function discardIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<Issue> {
  await newsletterOf(deps, accountId, newsletterId);
  const issue = await issueOf(deps, accountId, newsletterId, issueId);
  if (!releasable(issue)) throw notPending(issue);
  const discarded = await deps.issues.transition(accountId, newsletterId, issueId, issue.status, { status: 'DISCARDED' });
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
 * SENDING with lastError, due again after sendRetryMs, or makes it FAILED (see the decisions above).
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
    await sendFailed(deps, issue ?? found, err);
  }
}

/** A failure a retry alone may get past: a service did not answer, or answered that it is not ready. */
const isOutage = (err: unknown) => err instanceof DomainError && (err.code === GrpcStatus.UNAVAILABLE || err.code === GrpcStatus.DEADLINE_EXCEEDED || err.code === GrpcStatus.RESOURCE_EXHAUSTED);

/** lastError: a peer's own answer (its errorId and client-facing text), never an internal error's words. */
const failureText = (err: unknown) => (err instanceof DomainError ? `${err.errorId}: ${err.message}` : 'internal_error: the mail of this issue could not be queued');

async function sendFailed(deps: IssueDeps, issue: Issue, err: unknown): Promise<void> {
  const { accountId, newsletterId, id } = issue;
  const lastError = failureText(err);
  const outage = isOutage(err);
  const sendFailures = outage ? issue.sendFailures : issue.sendFailures + 1;
  deps.logger?.warn({ issueId: id, accountId, err: err instanceof DomainError ? err.errorId : (err as Error).message, sendFailures }, 'queueing an issue\'s mail failed');
  if (sendFailures < deps.sendMaxAttempts) {
    await deps.issues.setSendDue(accountId, newsletterId, id, new Date(deps.now().getTime() + deps.sendRetryMs), { lastError, sendFailures });
    return;
  }
  const failed = await deps.issues.transition(accountId, newsletterId, id, 'SENDING', { status: 'FAILED', sendDueAt: null, lastError, sendFailures });
  if (!failed) return;
  const errorId = err instanceof DomainError ? err.errorId : '';
  deps.issueFailed?.((SEND_FAILURE_REASONS as readonly string[]).includes(errorId) ? (errorId as SendFailureReason) : 'other');
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
