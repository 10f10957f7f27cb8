// The messaging service's AudienceSendService as the rss service sees it (app/ports.ts IssueMail):
// each page of an issue's audience is one call with the newsletter's templates and the issue's items.
import { createClient, peerClient, TIME_LIMITS, type Logger } from '@mailer/kit';
import { audienceSendsV1, emailMessagesV1 } from '@mailer/proto';
import type { IssueMail } from '../app/ports';
import { issueSendKey, issueValues } from '../domain/issues';

/** One page renders and stores up to 1,000 mails: far more than a lookup's deadline. */
const PAGE_DEADLINE_MS = 120_000;

export function issueMail(address: string, pageSize: number, logger?: Logger): IssueMail & { close(): void } {
  const client = peerClient(createClient(audienceSendsV1.AudienceSendServiceClient, address, PAGE_DEADLINE_MS), {
    service: 'messaging',
    errorId: 'service_unavailable',
    message: 'The messaging service is unavailable; retry later.',
    logger,
  });
  return {
    async queuePage(issue, newsletter, after) {
      const res = await client.queueAudiencePage({
        accountId: issue.accountId,
        sendKey: issueSendKey(issue.id),
        kind: emailMessagesV1.EmailKind.EMAIL_KIND_RSS,
        senderProfileId: newsletter.senderProfileId,
        content: {
          subject: newsletter.subjectPattern,
          html: newsletter.htmlContent,
          css: newsletter.cssContent,
          valuesJson: JSON.stringify(issueValues(newsletter, issue.items)),
        },
        segmentId: newsletter.segmentId ?? undefined,
        topicId: newsletter.topicId ?? undefined,
        afterSubscriberId: after,
        pageSize,
      });
      return { recipientCount: res.recipientCount, next: res.nextAfterSubscriberId };
    },
    async deliveredCounts(accountId, issueIds) {
      const counts = new Map<string, number>();
      if (!issueIds.length) return counts;
      const res = await client.countAudienceSends({ accountId, sendKeys: issueIds.map(issueSendKey) }, { deadlineMs: TIME_LIMITS.peerCall });
      res.counts.forEach((c, i) => counts.set(issueIds[i], c.delivered));
      return counts;
    },
    close: () => client.close(),
  };
}
