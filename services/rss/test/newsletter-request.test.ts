import { DomainError } from '@mailer/kit';
import { resolveNewsletterRequest, type NewsletterRequest } from '../src/domain/newsletter';
import { nextTick, parseSchedule, ScheduleError } from '../src/domain/schedule';

const valid: NewsletterRequest = {
  name: 'Digest',
  sourceUrl: 'https://blog.example/feed.xml',
  siteUrl: null,
  feedUrl: null,
  feedTitle: null,
  triggerMode: 'INSTANT',
  schedule: null,
  minItems: null,
  thresholdMaxAgeDays: null,
  releasePolicy: null,
  reviewAutoReleaseMinutes: null,
  segmentId: null,
  senderProfileId: '8B7A6C5D-4E3F-4A2B-9C1D-0E9F8A7B6C5D',
  topicId: null,
  subjectPattern: '{{ items[0].title }}',
  htmlContent: '{% for i in items %}{{ i.title }}{% endfor %}',
  cssContent: null,
  maxItemsPerIssue: null,
};

const problems = (req: Partial<NewsletterRequest>) => {
  try {
    resolveNewsletterRequest({ ...valid, ...req });
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return { errorId: (err as DomainError).errorId, paths: (err as DomainError).details?.map((d) => d.path) };
  }
  throw new Error('accepted');
};

describe('resolveNewsletterRequest', () => {
  it('applies the defaults (AUTO, 10 items, empty css) and lowercases ids', () => {
    const s = resolveNewsletterRequest(valid);
    expect(s).toMatchObject({ releasePolicy: 'AUTO', maxItemsPerIssue: 10, cssContent: '', senderProfileId: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d' });
  });
  it('names every wrong member', () => {
    expect(problems({ name: ' ', sourceUrl: 'ftp://x', maxItemsPerIssue: 0, minItems: 1001, senderProfileId: 'nope' })).toEqual({
      errorId: 'validation_failed',
      paths: ['body.name', 'body.sourceUrl', 'body.minItems', 'body.maxItemsPerIssue', 'body.senderProfileId'],
    });
  });
  it('SCHEDULE needs a schedule, THRESHOLD needs minItems', () => {
    expect(problems({ triggerMode: 'SCHEDULE' }).paths).toEqual(['body.schedule']);
    expect(problems({ triggerMode: 'THRESHOLD' }).paths).toEqual(['body.minItems']);
    expect(problems({ triggerMode: null }).paths).toEqual(['body.triggerMode']);
  });
  it('a cron that is not 5 fields is validation_failed; one cron refuses is rss_schedule_invalid', () => {
    expect(problems({ triggerMode: 'SCHEDULE', schedule: '0 8 * * * *' }).errorId).toBe('rss_schedule_invalid');
    expect(problems({ triggerMode: 'SCHEDULE', schedule: '61 8 * * *' })).toEqual({ errorId: 'rss_schedule_invalid', paths: ['body.schedule'] });
    expect(problems({ triggerMode: 'SCHEDULE', schedule: 'CRON_TZ=Mars/Base 0 8 * * *' }).errorId).toBe('rss_schedule_invalid');
  });
  it('templates must parse as Liquid', () => {
    expect(problems({ htmlContent: '{% for i in items %}' }).paths).toEqual(['body.htmlContent']);
    // What the messaging service's renderer refuses is refused when saved, never at send time.
    expect(problems({ htmlContent: '{{ items[0].title | no_such_filter }}' }).paths).toEqual(['body.htmlContent']);
    expect(problems({ subjectPattern: '{{ newsletter.name | upcase | nope }}' }).paths).toEqual(['body.subjectPattern']);
    expect(problems({ htmlContent: '{% include "header" %}' }).paths).toEqual(['body.htmlContent']);
    expect(problems({ htmlContent: '{% render "x" %}{% layout "y" %}' }).paths).toEqual(['body.htmlContent']);
  });
});

describe('schedules', () => {
  it('reads CRON_TZ and ticks in that zone', () => {
    const s = parseSchedule('CRON_TZ=Europe/Berlin 0 8 * * *');
    expect(s).toEqual({ fields: '0 8 * * *', timeZone: 'Europe/Berlin' });
    // 08:00 in Berlin in November (CET, UTC+1) is 07:00 UTC.
    expect(nextTick(s, new Date('2026-11-24T06:00:00Z'))).toEqual(new Date('2026-11-24T07:00:00Z'));
    expect(nextTick(parseSchedule('0 8 * * *'), new Date('2026-11-24T06:00:00Z'))).toEqual(new Date('2026-11-24T08:00:00Z'));
  });
  it('refuses expressions that never fire and bad prefixes', () => {
    expect(() => parseSchedule('0 0 30 2 *')).toThrow(ScheduleError);
    expect(() => parseSchedule('CRON_TZ=UTC')).toThrow(ScheduleError);
  });
});
