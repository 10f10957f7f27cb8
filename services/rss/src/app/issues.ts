// Issue use cases: the list, release and discard (API.md "RSS newsletters"), and the auto-release of
// REVIEW issues whose reviewAutoReleaseMinutes passed (run by the auto-release poller).
//
// Decisions: release and discard apply to PENDING_REVIEW issues only; any other state is 409
// rss_issue_not_pending_review (a released issue is on its way; a discarded one stays discarded).
import { failedPrecondition, notFound } from '@mailer/kit';
import type { Issue } from '../domain/issues';
import type { IssueRepository } from '../store/issues';
import type { NewsletterRepository } from '../store/newsletters';
import { newsletterNotFound } from './newsletters';
import type { IssueSender } from './ports';
import type { Logger } from '@mailer/kit';

export interface IssueDeps {
  newsletters: NewsletterRepository;
  issues: IssueRepository;
  sender: IssueSender;
  now(): Date;
  /** A released issue is due to be handed to the sender at `at`: the send poller is told. */
  wakeSend(at: Date): void;
  logger?: Pick<Logger, 'warn'>;
}

/** After a failed hand-over, the sender is tried again this much later. */
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

export async function listIssues(deps: IssueDeps, accountId: string, newsletterId: string, pageNumber: number, pageSize: number) {
  await newsletterOf(deps, accountId, newsletterId);
  return deps.issues.page(accountId, newsletterId, pageNumber, pageSize);
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
 * Use case HandOverIssue (the send poller, on a claimed RELEASED issue): the sender takes the issue
 * (idempotent per issue: a hand-over repeated after a crash queues nothing twice). Taken: no longer
 * due. Failed: due again after SEND_RETRY_MS, the issue stays RELEASED.
 */
export async function handOverIssue(deps: IssueDeps, accountId: string, newsletterId: string, issueId: string): Promise<void> {
  const [newsletter, issue] = await Promise.all([deps.newsletters.get(accountId, newsletterId), deps.issues.get(accountId, newsletterId, issueId)]);
  if (!newsletter || !issue || issue.status !== 'RELEASED') return;
  try {
    await deps.sender.send(issue, newsletter);
  } catch (err) {
    deps.logger?.warn({ issueId, err: (err as Error).message }, 'handing a released issue to the sender failed; tried again later');
    await deps.issues.setSendDue(accountId, newsletterId, issueId, new Date(deps.now().getTime() + SEND_RETRY_MS));
    return;
  }
  await deps.issues.setSendDue(accountId, newsletterId, issueId, null);
}
