import { Counter, startDuePoller, TIME_LIMITS } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { createOutbound, outboundSettingsOf } from '@mailer/outbound';
import { referenceHandlers } from '@mailer/kit/references';
import { commonV1, referencesV1, rssNewslettersV1, rssV1 } from '@mailer/proto';
import { listReferences } from './app/list-references';
import { autoReleaseIssue, SEND_FAILURE_REASONS, sendIssue, type SendFailureReason } from './app/issues';
import { POLL_LEASE_MS } from './app/newsletters';
import { pollDueNewsletter } from './app/poll';
import { feedReader } from './clients/feeds';
import { issueMail } from './clients/issue-mail';
import { outboxRepository } from '@mailer/nats';
import { accountCatalog } from './clients/peers';
import type { Config } from './config';
import { fieldUsageHandlers } from './handlers/field-usage';
import { newsletterHandlers } from './handlers/newsletters';
import { dueAutoReleases, dueSends, issueCollection, issueRepository } from './store/issues';
import { itemRepository } from './store/items';
import { dueNewsletters, newsletterCollection, newsletterRepository } from './store/newsletters';

/** Deadline of each call to the segment, subscriber and messaging services while a newsletter is saved. */
const PEER_DEADLINE_MS = TIME_LIMITS.peerCall;
const AUTO_RELEASE_LEASE_MS = 60_000;

/**
 * Registers the rss service's handlers and starts its pollers (layout: handlers/ and events/ ->
 * app/ -> domain/, store/; see docs/architecture.md).
 */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  ctx.grpc.add(rssV1.RssServiceService, {
    describe: async () => ({ service: 'rss', protoPackage: rssV1.protobufPackage }),
  });
  const newsletters = newsletterRepository(ctx.store);
  const items = itemRepository(ctx.store);
  const issues = issueRepository(ctx.store);
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the newsletters whose templates print it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ newsletters }));
  // The segment and subscriber services ask before a segment or topic is deleted: the newsletters sending to it.
  ctx.grpc.add(referencesV1.ReferenceServiceService, referenceHandlers((accountId, kind, id) => listReferences({ newsletters }, accountId, kind, id)));

  const outbound = createOutbound(outboundSettingsOf(ctx.config));
  const catalog = accountCatalog(
    { segment: ctx.config.SEGMENT_GRPC_ADDR, subscriber: ctx.config.SUBSCRIBER_GRPC_ADDR, messaging: ctx.config.MESSAGING_GRPC_ADDR },
    PEER_DEADLINE_MS,
    ctx.logger,
  );
  const mail = issueMail(ctx.config.MESSAGING_GRPC_ADDR, ctx.config.RSS_SEND_PAGE_SIZE, ctx.logger);
  // What an alert watches: issues whose send stopped (FAILED) and waits for the customer.
  const issuesFailed = new Counter({
    name: 'mailer_rss_issues_failed_total',
    help: `RSS issues whose send stopped after RSS_SEND_MAX_ATTEMPTS failed tries (FAILED), by reason (${SEND_FAILURE_REASONS.join(', ')})`,
    labelNames: ['reason'],
    registers: [ctx.metrics.registry],
  });
  for (const reason of SEND_FAILURE_REASONS) issuesFailed.inc({ reason }, 0);
  // Both pollers exist before the handlers that wake them; they start looking at the store at once.
  let wakePoller = (_at: Date) => {};
  let wakeAutoRelease = (_at: Date) => {};
  let wakeSend = (_at: Date) => {};
  const deps = {
    store: ctx.store,
    newsletters,
    items,
    issues,
    feeds: feedReader(outbound),
    // An issue's mail: the audience pages of the messaging service; rss.issue_sent through the outbox.
    mail,
    outbox: outboxRepository(ctx.store),
    notifyOutbox: ctx.notifyOutbox,
    catalog,
    pollIntervalMs: ctx.config.RSS_POLL_INTERVAL_SECONDS * 1000,
    now: ctx.now,
    newId: ctx.newId,
    wakePoller: (at: Date) => wakePoller(at),
    wakeAutoRelease: (at: Date) => wakeAutoRelease(at),
    wakeSend: (at: Date) => wakeSend(at),
    sendLeaseMs: ctx.config.RSS_SEND_LEASE_SECONDS * 1000,
    sendRetryMs: ctx.config.RSS_SEND_RETRY_SECONDS * 1000,
    sendMaxAttempts: ctx.config.RSS_SEND_MAX_ATTEMPTS,
    issueFailed: (reason: SendFailureReason) => issuesFailed.inc({ reason }),
    logger: ctx.logger,
  };
  ctx.grpc.add(rssNewslettersV1.RssNewsletterServiceService, newsletterHandlers(deps));

  const due = dueNewsletters(newsletterCollection(ctx.store));
  const poller = startDuePoller({
    name: 'newsletters',
    claim: due.claim,
    nextDueAt: due.nextDueAt,
    leaseMs: POLL_LEASE_MS,
    concurrency: ctx.config.RSS_POLL_CONCURRENCY,
    now: ctx.now,
    logger: ctx.logger,
    async handle(row) {
      const outcome = await pollDueNewsletter(deps, row.accountId, row._id);
      if (outcome?.failure) ctx.logger.info({ newsletterId: row._id, accountId: row.accountId, code: outcome.failure.code }, 'feed read failed; retried at the next poll');
    },
  });
  const reviews = dueAutoReleases(issueCollection(ctx.store));
  const autoRelease = startDuePoller({
    name: 'auto-release',
    claim: reviews.claim,
    nextDueAt: reviews.nextDueAt,
    leaseMs: AUTO_RELEASE_LEASE_MS,
    concurrency: 4,
    now: ctx.now,
    logger: ctx.logger,
    handle: (row) => autoReleaseIssue(deps, row.accountId, row.newsletterId, row._id),
  });
  // Released issues are sent through due rows too: a release is never lost between the release and
  // the send, and a send cut short (a crash, a peer down) resumes at its last queued page.
  const sends = dueSends(issueCollection(ctx.store));
  const sendPoller = startDuePoller({
    name: 'issue-sends',
    claim: sends.claim,
    nextDueAt: sends.nextDueAt,
    leaseMs: deps.sendLeaseMs,
    concurrency: 2,
    now: ctx.now,
    logger: ctx.logger,
    handle: (row) => sendIssue(deps, row.accountId, row.newsletterId, row._id),
  });
  wakePoller = poller.wake;
  wakeSend = sendPoller.wake;
  wakeAutoRelease = autoRelease.wake;
  return [() => poller.stop(), () => autoRelease.stop(), () => sendPoller.stop(), () => outbound.close(), async () => catalog.close(), async () => mail.close()];
}
