// RssNewsletterService: gRPC <-> use cases (app/newsletters.ts, app/issues.ts), one use case per RPC.
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { rssNewslettersV1 as v1 } from '@mailer/proto';
import * as issues from '../app/issues';
import * as uc from '../app/newsletters';
import type { Issue, ItemSnapshot } from '../domain/issues';
import type { Newsletter, NewsletterRequest } from '../domain/newsletter';

const Modes = protoEnum(v1.RssTriggerMode, 'RSS_TRIGGER_MODE_');
const Policies = protoEnum(v1.RssReleasePolicy, 'RSS_RELEASE_POLICY_');
const Statuses = protoEnum(v1.RssNewsletterStatus, 'RSS_NEWSLETTER_STATUS_');
const IssueStatuses = protoEnum(v1.RssIssueStatus, 'RSS_ISSUE_STATUS_');

/** Longest id a request may carry: anything longer names nothing that exists. */
const ID_MAX = 100;
const idOf = (id: string | undefined) => (id ?? '').slice(0, ID_MAX + 1).toLowerCase();

export const itemToProto = (i: ItemSnapshot): v1.RssItem => ({
  guid: i.guid,
  title: i.title,
  link: i.link,
  publishedAt: i.publishedAt?.toISOString(),
  summary: i.summary,
  content: i.content,
  author: i.author,
  imageUrl: i.imageUrl,
});

export function newsletterToProto({ newsletter: n, pendingItemCount }: uc.NewsletterView): v1.RssNewsletter {
  return {
    id: n.id,
    name: n.name,
    sourceUrl: n.sourceUrl,
    siteUrl: n.siteUrl ?? undefined,
    feedUrl: n.feedUrl ?? undefined,
    feedTitle: n.feedTitle ?? undefined,
    triggerMode: Modes.toProto(n.triggerMode),
    schedule: n.schedule ?? undefined,
    minItems: n.minItems ?? undefined,
    thresholdMaxAgeDays: n.thresholdMaxAgeDays ?? undefined,
    releasePolicy: Policies.toProto(n.releasePolicy),
    reviewAutoReleaseMinutes: n.reviewAutoReleaseMinutes ?? undefined,
    segmentId: n.segmentId ?? undefined,
    senderProfileId: n.senderProfileId,
    topicId: n.topicId ?? undefined,
    subjectPattern: n.subjectPattern,
    htmlContent: n.htmlContent,
    cssContent: n.cssContent,
    maxItemsPerIssue: n.maxItemsPerIssue,
    status: Statuses.toProto(n.status),
    lastCheckedAt: n.lastCheckedAt?.toISOString(),
    lastItemPublishedAt: n.lastItemPublishedAt?.toISOString(),
    lastError: n.lastError ?? undefined,
    createdAt: n.createdAt.toISOString(),
    pendingItemCount,
    nextScheduledAt: n.status === 'ACTIVE' ? n.nextTickAt?.toISOString() : undefined,
  };
}

export const issueToProto = (i: Issue): v1.RssIssue => ({
  id: i.id,
  status: IssueStatuses.toProto(i.status),
  itemCount: i.items.length,
  items: i.items.map(itemToProto),
  subject: i.subject,
  createdAt: i.createdAt.toISOString(),
  releasedAt: i.releasedAt?.toISOString(),
  sentAt: i.sentAt?.toISOString(),
  recipientCount: i.recipientCount,
  deliveredCount: i.deliveredCount,
  autoReleaseAt: i.autoReleaseAt?.toISOString(),
  lastError: i.lastError ?? undefined,
});

export function newsletterInput(n: v1.RssNewsletterInput | undefined): NewsletterRequest {
  if (!n) throw invalid('validation_failed', 'newsletter is required', [{ path: 'body', problem: 'required' }]);
  return {
    name: n.name,
    sourceUrl: n.sourceUrl,
    siteUrl: n.siteUrl ?? null,
    feedUrl: n.feedUrl ?? null,
    feedTitle: n.feedTitle ?? null,
    triggerMode: (Modes.tryFromProto(n.triggerMode) as NewsletterRequest['triggerMode']) ?? null,
    schedule: n.schedule ?? null,
    minItems: n.minItems ?? null,
    thresholdMaxAgeDays: n.thresholdMaxAgeDays ?? null,
    releasePolicy: (Policies.tryFromProto(n.releasePolicy) as NewsletterRequest['releasePolicy']) ?? null,
    reviewAutoReleaseMinutes: n.reviewAutoReleaseMinutes ?? null,
    segmentId: n.segmentId ?? null,
    senderProfileId: n.senderProfileId,
    topicId: n.topicId ?? null,
    subjectPattern: n.subjectPattern,
    htmlContent: n.htmlContent,
    cssContent: n.cssContent ?? null,
    maxItemsPerIssue: n.maxItemsPerIssue ?? null,
  };
}

const page = (v: number, def: number, max: number, path: string) => {
  const n = v === 0 ? def : v;
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid('validation_failed', `${path} must be from 1 to ${max}`, [{ path, problem: `from 1 to ${max}` }]);
  return n;
};

export function newsletterHandlers(deps: uc.NewsletterDeps & issues.IssueDeps): AsyncHandlers<v1.RssNewsletterServiceServer> {
  const out = async (n: Newsletter) => ({ newsletter: newsletterToProto(await uc.newsletterView(deps, n)) });
  return {
    listRssNewsletters: async (req) => ({ items: (await uc.listNewsletters(deps, accountOf(req))).map(newsletterToProto) }),
    getRssNewsletter: async (req) => out(await uc.getNewsletter(deps, accountOf(req), idOf(req.newsletterId))),
    createRssNewsletter: async (req) => out(await uc.createNewsletter(deps, accountOf(req), newsletterInput(req.newsletter))),
    updateRssNewsletter: async (req) => out(await uc.updateNewsletter(deps, accountOf(req), idOf(req.newsletterId), newsletterInput(req.newsletter))),
    deleteRssNewsletter: async (req) => {
      await uc.deleteNewsletter(deps, accountOf(req), idOf(req.newsletterId));
      return {};
    },
    previewRssFeed: async (req) => {
      accountOf(req);
      const feed = await uc.previewFeed(deps, req.url);
      return { feedTitle: feed.title, siteUrl: feed.siteUrl ?? undefined, items: feed.items.map(itemToProto) };
    },
    checkRssNewsletter: async (req) => {
      const outcome = await uc.checkNewsletter(deps, accountOf(req), idOf(req.newsletterId));
      return { newItems: outcome.newItems, issueId: outcome.issueId ?? undefined };
    },
    pauseRssNewsletter: async (req) => out(await uc.pauseNewsletter(deps, accountOf(req), idOf(req.newsletterId))),
    resumeRssNewsletter: async (req) => out(await uc.resumeNewsletter(deps, accountOf(req), idOf(req.newsletterId), req.rebaseline)),
    listRssIssues: async (req) => {
      const pageNumber = page(req.pageNumber, 1, 1_000_000, 'query.pageNumber');
      const pageSize = page(req.pageSize, 50, 1000, 'query.pageSize');
      const { items, total } = await issues.listIssues(deps, accountOf(req), idOf(req.newsletterId), pageNumber, pageSize);
      return { items: items.map(issueToProto), pageNumber, pageSize, totalItems: String(total), totalPages: Math.ceil(total / pageSize) };
    },
    releaseRssIssue: async (req) => ({ issue: issueToProto(await issues.releaseIssue(deps, accountOf(req), idOf(req.newsletterId), idOf(req.issueId))) }),
    discardRssIssue: async (req) => ({ issue: issueToProto(await issues.discardIssue(deps, accountOf(req), idOf(req.newsletterId), idOf(req.issueId))) }),
    countRssNewslettersUsing: async (req) => {
      const id = idOf(req.senderProfileId);
      if (id === '' || id.length > ID_MAX) return { count: 0, newsletters: [] };
      return uc.newslettersUsingSenderProfile(deps, accountOf(req), id);
    },
  };
}
