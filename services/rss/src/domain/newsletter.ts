// An RSS newsletter (the API contract "RSS newsletters", spec RssNewsletterRequestDto) and the rules of its
// request. Pure: ids that must exist in the account are checked by app/ against their services.
import { invalid, type Problem } from '@mailer/kit';
import { compileTemplate, MAX_TEMPLATE_PART_CHARS } from '@mailer/templates';
import { parseSchedule, ScheduleError } from './schedule';

export type TriggerMode = 'INSTANT' | 'SCHEDULE' | 'THRESHOLD';
export type ReleasePolicy = 'AUTO' | 'REVIEW';
export type NewsletterStatus = 'ACTIVE' | 'PAUSED';

/** Ranges of the request's numbers (published in the OpenAPI document, gateway/src/openapi/rss). */
export const LIMITS = {
  nameMax: 200,
  urlMax: 2048,
  feedTitleMax: 500,
  scheduleMax: 200,
  minItems: { min: 1, max: 1000 },
  thresholdMaxAgeDays: { min: 1, max: 3650 },
  /** 30 days. */
  reviewAutoReleaseMinutes: { min: 1, max: 43_200 },
  maxItemsPerIssue: { min: 1, max: 100, default: 10 },
  subjectMax: 998,
  // The template engine renders at most this much per template part.
  htmlMax: MAX_TEMPLATE_PART_CHARS,
  cssMax: MAX_TEMPLATE_PART_CHARS,
} as const;

/** What a create or PUT sets: the request's members with defaults applied. */
export interface NewsletterSettings {
  name: string;
  sourceUrl: string;
  siteUrl: string | null;
  feedUrl: string | null;
  feedTitle: string | null;
  triggerMode: TriggerMode;
  schedule: string | null;
  minItems: number | null;
  thresholdMaxAgeDays: number | null;
  releasePolicy: ReleasePolicy;
  reviewAutoReleaseMinutes: number | null;
  segmentId: string | null;
  senderProfileId: string;
  topicId: string | null;
  subjectPattern: string;
  htmlContent: string;
  cssContent: string;
  maxItemsPerIssue: number;
}

export interface Newsletter extends NewsletterSettings {
  id: string;
  accountId: string;
  status: NewsletterStatus;
  lastCheckedAt: Date | null;
  lastItemPublishedAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Conditional GET validators of the last successful read. */
  etag: string | null;
  lastModified: string | null;
  /** When the poller polls next (ACTIVE only). */
  nextPollAt: Date | null;
  /** SCHEDULE: the next cron tick (ACTIVE only). */
  nextTickAt: Date | null;
}

/** The request as the handler read it (proto optional members as null; enums already named). */
export interface NewsletterRequest {
  name: string;
  sourceUrl: string;
  siteUrl: string | null;
  feedUrl: string | null;
  feedTitle: string | null;
  triggerMode: TriggerMode | null;
  schedule: string | null;
  minItems: number | null;
  thresholdMaxAgeDays: number | null;
  releasePolicy: ReleasePolicy | null;
  reviewAutoReleaseMinutes: number | null;
  segmentId: string | null;
  senderProfileId: string;
  topicId: string | null;
  subjectPattern: string;
  htmlContent: string;
  cssContent: string | null;
  maxItemsPerIssue: number | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * The save-time parse uses the platform's engine, as every render of the newsletter will (no file
 * tags, unknown filters refused): a template this accepted and the renderer refused would leave every
 * issue of the newsletter unsendable. (The test render of issues.ts checkIssueTemplates follows.)
 */
function liquidParses(part: 'subject' | 'html', template: string): boolean {
  try {
    compileTemplate(part === 'subject' ? { subject: template, html: '' } : { subject: '', html: template });
    return true;
  } catch {
    return false;
  }
}

/** The request's settings, or INVALID_ARGUMENT naming every member that is wrong. */
export function resolveNewsletterRequest(req: NewsletterRequest): NewsletterSettings {
  const problems: Problem[] = [];
  const bad = (member: string, problem: string) => problems.push({ path: `body.${member}`, problem });
  const text = (member: keyof NewsletterRequest, v: string | null, max: number, required: boolean) => {
    if (v === null || v.trim() === '') {
      if (required) bad(member, 'required, not blank');
    } else if (v.length > max) bad(member, `at most ${max} characters`);
  };
  const range = (member: keyof NewsletterRequest, v: number | null, r: { min: number; max: number }) => {
    if (v !== null && (!Number.isInteger(v) || v < r.min || v > r.max)) bad(member, `an integer from ${r.min} to ${r.max}`);
  };
  const url = (member: keyof NewsletterRequest, v: string | null, required: boolean) => {
    text(member, v, LIMITS.urlMax, required);
    if (v !== null && v.trim() !== '' && v.length <= LIMITS.urlMax && !absoluteHttpUrl(v)) bad(member, 'an absolute http(s) URL');
  };
  const id = (member: keyof NewsletterRequest, v: string | null, required: boolean) => {
    if (v === null || v === '') {
      if (required) bad(member, 'required');
    } else if (!UUID.test(v.toLowerCase())) bad(member, 'a UUID');
  };
  text('name', req.name, LIMITS.nameMax, true);
  url('sourceUrl', req.sourceUrl, true);
  url('siteUrl', req.siteUrl, false);
  url('feedUrl', req.feedUrl, false);
  text('feedTitle', req.feedTitle, LIMITS.feedTitleMax, false);
  if (!req.triggerMode) bad('triggerMode', 'one of INSTANT, SCHEDULE, THRESHOLD');
  if (req.triggerMode === 'SCHEDULE' && (req.schedule === null || req.schedule.trim() === '')) bad('schedule', 'required when triggerMode is SCHEDULE');
  let scheduleProblem: string | null = null;
  if (req.schedule !== null && req.schedule.trim() !== '') {
    if (req.schedule.length > LIMITS.scheduleMax) bad('schedule', `at most ${LIMITS.scheduleMax} characters`);
    else {
      try {
        parseSchedule(req.schedule);
      } catch (err) {
        if (!(err instanceof ScheduleError)) throw err;
        scheduleProblem = err.message;
      }
    }
  }
  if (req.triggerMode === 'THRESHOLD' && req.minItems === null) bad('minItems', 'required when triggerMode is THRESHOLD');
  range('minItems', req.minItems, LIMITS.minItems);
  range('thresholdMaxAgeDays', req.thresholdMaxAgeDays, LIMITS.thresholdMaxAgeDays);
  range('reviewAutoReleaseMinutes', req.reviewAutoReleaseMinutes, LIMITS.reviewAutoReleaseMinutes);
  range('maxItemsPerIssue', req.maxItemsPerIssue, LIMITS.maxItemsPerIssue);
  id('segmentId', req.segmentId, false);
  id('topicId', req.topicId, false);
  id('senderProfileId', req.senderProfileId, true);
  text('subjectPattern', req.subjectPattern, LIMITS.subjectMax, true);
  text('htmlContent', req.htmlContent, LIMITS.htmlMax, true);
  text('cssContent', req.cssContent, LIMITS.cssMax, false);
  for (const member of ['subjectPattern', 'htmlContent'] as const) {
    const v = req[member];
    if (v && v.length <= (member === 'subjectPattern' ? LIMITS.subjectMax : LIMITS.htmlMax) && !liquidParses(member === 'subjectPattern' ? 'subject' : 'html', v)) bad(member, 'a Liquid template that parses');
  }
  if (problems.length > 0) throw invalid('validation_failed', `invalid newsletter: ${problems.map((p) => `${p.path} ${p.problem}`).join('; ')}`, problems);
  // A schedule that cron, the field count or the zone refused gets its own errorId.
  if (scheduleProblem) throw invalid('rss_schedule_invalid', scheduleProblem, [{ path: 'body.schedule', problem: scheduleProblem }]);
  const blankToNull = (v: string | null) => (v === null || v.trim() === '' ? null : v.trim());
  const lower = (v: string | null) => blankToNull(v)?.toLowerCase() ?? null;
  return {
    name: req.name.trim(),
    sourceUrl: req.sourceUrl.trim(),
    siteUrl: blankToNull(req.siteUrl),
    feedUrl: blankToNull(req.feedUrl),
    feedTitle: blankToNull(req.feedTitle),
    triggerMode: req.triggerMode!,
    schedule: blankToNull(req.schedule),
    minItems: req.minItems,
    thresholdMaxAgeDays: req.thresholdMaxAgeDays,
    releasePolicy: req.releasePolicy ?? 'AUTO',
    reviewAutoReleaseMinutes: req.reviewAutoReleaseMinutes,
    segmentId: lower(req.segmentId),
    senderProfileId: req.senderProfileId.toLowerCase(),
    topicId: lower(req.topicId),
    subjectPattern: req.subjectPattern,
    htmlContent: req.htmlContent,
    cssContent: req.cssContent ?? '',
    maxItemsPerIssue: req.maxItemsPerIssue ?? LIMITS.maxItemsPerIssue.default,
  };
}

function absoluteHttpUrl(v: string): boolean {
  try {
    const u = new URL(v.trim());
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
