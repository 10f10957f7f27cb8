// RSS newsletters and their issues (rss service) between REST and gRPC. Absent optional members of
// the service's answer are answered as JSON `null`.
import { protoEnum } from '@mailer/kit';
import { rssNewslettersV1 as v1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';
import { int64, present } from './numbers';

export const RssTriggerModes = protoEnum(v1.RssTriggerMode, 'RSS_TRIGGER_MODE_');
export const RssReleasePolicies = protoEnum(v1.RssReleasePolicy, 'RSS_RELEASE_POLICY_');
export const RssNewsletterStatuses = protoEnum(v1.RssNewsletterStatus, 'RSS_NEWSLETTER_STATUS_');
export const RssIssueStatuses = protoEnum(v1.RssIssueStatus, 'RSS_ISSUE_STATUS_');

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** `id` is accepted and ignored: the service assigns it on create, the path names it otherwise. */
export const newsletterToProto = (b: Schemas['RssNewsletterRequestDto']): v1.RssNewsletterInput => ({
  name: b.name,
  sourceUrl: b.sourceUrl,
  siteUrl: opt(b.siteUrl),
  feedUrl: opt(b.feedUrl),
  feedTitle: opt(b.feedTitle),
  triggerMode: RssTriggerModes.toProtoOrUnspecified(b.triggerMode),
  schedule: opt(b.schedule),
  minItems: opt(b.minItems),
  thresholdMaxAgeDays: opt(b.thresholdMaxAgeDays),
  releasePolicy: RssReleasePolicies.toProtoOrUnspecified(b.releasePolicy),
  reviewAutoReleaseMinutes: opt(b.reviewAutoReleaseMinutes),
  segmentId: opt(b.segmentId),
  senderProfileId: b.senderProfileId,
  topicId: opt(b.topicId),
  subjectPattern: b.subjectPattern,
  htmlContent: b.htmlContent,
  cssContent: opt(b.cssContent),
  maxItemsPerIssue: opt(b.maxItemsPerIssue),
});

export function newsletterJson(n: v1.RssNewsletter | undefined) {
  const r = present(n, 'the newsletter');
  return {
    id: r.id,
    name: r.name,
    sourceUrl: r.sourceUrl,
    siteUrl: r.siteUrl ?? null,
    feedUrl: r.feedUrl ?? null,
    feedTitle: r.feedTitle ?? null,
    triggerMode: RssTriggerModes.fromProto(r.triggerMode),
    schedule: r.schedule ?? null,
    minItems: r.minItems ?? null,
    thresholdMaxAgeDays: r.thresholdMaxAgeDays ?? null,
    releasePolicy: RssReleasePolicies.fromProto(r.releasePolicy),
    reviewAutoReleaseMinutes: r.reviewAutoReleaseMinutes ?? null,
    segmentId: r.segmentId ?? null,
    senderProfileId: r.senderProfileId,
    topicId: r.topicId ?? null,
    subjectPattern: r.subjectPattern,
    htmlContent: r.htmlContent,
    cssContent: r.cssContent,
    maxItemsPerIssue: r.maxItemsPerIssue,
    status: RssNewsletterStatuses.fromProto(r.status),
    lastCheckedAt: r.lastCheckedAt ?? null,
    lastItemPublishedAt: r.lastItemPublishedAt ?? null,
    lastError: r.lastError ?? null,
    createdAt: r.createdAt,
    pendingItemCount: r.pendingItemCount,
    nextScheduledAt: r.nextScheduledAt ?? null,
  };
}

const itemJson = (i: v1.RssItem) => ({
  guid: i.guid,
  title: i.title,
  link: i.link,
  publishedAt: i.publishedAt ?? null,
  summary: i.summary,
  content: i.content,
  author: i.author,
  imageUrl: i.imageUrl,
});

export const previewJson = (p: v1.PreviewRssFeedResponse) => ({
  feedTitle: p.feedTitle,
  siteUrl: p.siteUrl ?? null,
  items: p.items.map((i) => ({ guid: i.guid, title: i.title, link: i.link, publishedAt: i.publishedAt ?? null, summary: i.summary })),
});

export function issueJson(i: v1.RssIssue | undefined) {
  const r = present(i, 'the issue');
  return {
    id: r.id,
    status: RssIssueStatuses.fromProto(r.status),
    itemCount: r.itemCount,
    items: r.items.map(itemJson),
    subject: r.subject,
    createdAt: r.createdAt,
    releasedAt: r.releasedAt ?? null,
    sentAt: r.sentAt ?? null,
    recipientCount: r.recipientCount,
    deliveredCount: r.deliveredCount,
    autoReleaseAt: r.autoReleaseAt ?? null,
    lastError: r.lastError ?? null,
  };
}

export const issuePageJson = (page: v1.ListRssIssuesResponse) => ({
  items: page.items.map(issueJson),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: int64(page.totalItems),
  totalPages: page.totalPages,
});
