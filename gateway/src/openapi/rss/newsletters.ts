import { errorResponse, instant, ok, rateLimitHeaders, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { int32, int64 } from '../subscriber/shared';

/** RSS newsletters (rss service, the API contract "RSS newsletters"). Rules: services/rss/src/app/newsletters.ts, domain/newsletter.ts. */

export const RSS_TRIGGER_MODES = ['INSTANT', 'SCHEDULE', 'THRESHOLD'] as const;
export const RSS_RELEASE_POLICIES = ['AUTO', 'REVIEW'] as const;
export const RSS_ISSUE_STATUSES = ['PENDING_REVIEW', 'RELEASED', 'SENDING', 'SENT', 'DISCARDED', 'FAILED'] as const;
/** Feed errors answered 422 (the body is valid; the feed at the URL cannot be used). feed_not_allowed is 400: the URL itself is refused. */
export const RSS_FEED_ERRORS_422 = ['feed_unreachable', 'feed_too_large', 'feed_timeout', 'feed_too_many_redirects', 'feed_http_error', 'feed_unreadable'] as const;

const newsletterPath = [ref('parameters', 'RssNewsletterId')];
const issuePath = [...newsletterPath, ref('parameters', 'RssIssueId')];
const NOT_FOUND = 'A newsletter of another account is unknown here (`404 rss_newsletter_not_found`).';

const FEED = `Feeds: RSS 2.0, Atom, RDF and JSON Feed, read through the outbound URL guard of the webhooks (https only and public addresses only, unless the operator allows \`http\` with \`OUTBOUND_ALLOW_HTTP\` and ranges with \`OUTBOUND_ALLOWED_CIDRS\`; at most 3 redirects, each checked again), 10 s timeout, 5 MB limit, conditional GET (ETag, Last-Modified). A URL the guard refuses is \`400 feed_not_allowed\`; a feed that cannot be read is \`422\` with the reason as errorId: \`feed_unreachable\` (connection or DNS failure), \`feed_timeout\`, \`feed_too_large\`, \`feed_too_many_redirects\`, \`feed_http_error\` (an answer other than 2xx/304), \`feed_unreadable\` (not a feed in any of the four formats). The operations that read a feed (preview, create, a PUT changing \`sourceUrl\`, check, resume with \`rebaseline\`) answer within about 15 s (the feed's 10 s and the checks around it): give your HTTP client a longer timeout.`;

const RULES = `Rules of the body:
- \`name\` (1-200 characters), \`sourceUrl\` (the feed to read: an absolute http(s) URL of at most 2048 characters), \`senderProfileId\`, \`triggerMode\`, \`subjectPattern\` (at most 998 characters) and \`htmlContent\` (at most 256 KiB, what the messaging service renders) are required; \`subjectPattern\` and \`htmlContent\` must be Liquid templates that parse as the mail renderer reads them: known filters only, no \`include\`/\`render\`/\`layout\`/\`block\` tags (\`400 validation_failed\`). \`cssContent\` at most 256 KiB.
- The templates are then test-rendered once, as an issue of \`maxItemsPerIssue\` sample items for a sample reader, by the engine and with the limits of every send (per part at most 500 ms of rendering, 1 MiB of output and a bounded memory budget for ranges, filters and assigns): a template that passes one of them (a range of millions joined, a string doubled in a loop, loops nested too deep) is \`422 template_render_failed\` with \`details\` naming the member; nothing is saved.
- \`siteUrl\`, \`feedUrl\`, \`feedTitle\`: filled from the feed when absent.
- \`senderProfileId\`, \`segmentId\` and \`topicId\` must exist in the account (\`404 sender_profile_not_found\`, \`segment_not_found\`, \`topic_not_found\`, with \`details\` naming the member). Segment and topic are optional; with neither, the audience is every ACTIVE subscriber.
- \`triggerMode: INSTANT\`: an issue as soon as a poll finds new items. \`SCHEDULE\`: \`schedule\` is required, a 5-field cron expression (minute hour day-of-month month day-of-week), optionally prefixed \`CRON_TZ=<IANA zone> \` (default UTC), e.g. \`CRON_TZ=Europe/Berlin 0 8 * * 1\`; at each tick an issue of the items collected since the last one, none when there are none. A schedule that is not 5 fields, that cron refuses (a field out of range), names an unknown zone or never fires is \`400 rss_schedule_invalid\` (\`details\` says which). \`THRESHOLD\`: \`minItems\` (1-1000) is required; an issue once at least \`minItems\` new items wait; with \`thresholdMaxAgeDays\` (1-3650), items published (else found) longer ago drop out of the wait and are never sent.
- \`maxItemsPerIssue\` (1-100, default 10): the newest items go into an issue; the rest stay for the next one.
- \`releasePolicy\` (default \`AUTO\`): \`AUTO\` releases an issue at once; \`REVIEW\` keeps it \`PENDING_REVIEW\` until released or discarded, or until \`reviewAutoReleaseMinutes\` (1-43200) pass when set.
- \`id\` is ignored (the service assigns it; the path names it on PUT). Optional members may be \`null\` (= absent).

${FEED}`;

const ISSUE_STATES = 'Release and discard apply to `PENDING_REVIEW` and `FAILED` issues; an issue in any other state is `409 rss_issue_not_pending_review`. A released issue is `RELEASED` until the send starts, `SENDING` while its audience is queued page by page (`recipientCount` grows; a send cut short by a restart resumes at its last queued page) and `SENT` once every recipient\'s mail is queued (`sentAt`, then the `rss.issue_sent` fact). A try that fails is retried a minute later (operator setting `RSS_SEND_RETRY_SECONDS`) with the reason in `lastError`: a service of ours that does not answer is retried until it does; any other failure (the segment, topic or sender profile is gone, the templates cannot be rendered for the readers) counts, and after 5 failed tries in a row (operator setting `RSS_SEND_MAX_ATTEMPTS`) the issue is `FAILED` and waits for you. Fix the cause (e.g. PUT the newsletter with another segment or a template that renders) and release it again: the send resumes where it stopped (the pages already queued are not read again, and nobody gets an issue twice), with a new count of tries; or discard it. `deliveredCount` counts the mails the relay accepted (it is read from the messaging service; if that service does not answer, the list shows the last stored value, 0).\n\nSending: `subjectPattern` and `htmlContent` are rendered per recipient with `items`, `newsletter` (`name`, `feedTitle`, `siteUrl`) and `subscriber` (`email`, `firstName`, `fields`), plus `links.unsubscribe`; every value is HTML-escaped in `htmlContent` (`| raw` opts out) except the items\' `summary` and `content`: they are the feed\'s HTML, sanitized before an item is kept or shown (no script, style, form, iframe, object or embed, no event handler, style or class attribute, only absolute http(s) links and images, tracking pixels removed), and print as that HTML in `htmlContent` (with or without `| raw`) and as plain text in `subjectPattern`; the text part of the mail is derived from the html. `cssContent` is inlined. When the rendered html has no link to `links.unsubscribe` (or `links.preferences`, the same page), a short footer with both links is added to the html and the text part. Recipients: the segment\'s matching contacts (TRUE only) that are `ACTIVE`, subscribed to the topic (never opted out of it) when one is set, and not suppressed; with neither segment nor topic, every `ACTIVE` subscriber. Each gets marketing mail with `List-Unsubscribe`, at most once per issue (a page queued twice after a crash finds its mail already there). The newsletter\'s templates and audience at send time apply (a change during a send applies to the pages not yet queued).';

const feedErrors422 = (extra: string[] = []) =>
  errorResponse('The feed could not be read (the reason is the errorId), or the Idempotency-Key was used for a different request.', [...RSS_FEED_ERRORS_422, ...extra, 'idempotency_key_reused'], rateLimitHeaders);

export const rssPaths = {
  '/rss-newsletters': {
    get: {
      tags: ['RSS newsletters'],
      operationId: 'listRssNewsletters',
      summary: 'List RSS newsletters',
      description: 'Every newsletter of the account, oldest first.',
      responses: responses('get', { '200': ok('The newsletters.', schemaRef('RssNewsletterList')) }, {}),
    },
    post: {
      tags: ['RSS newsletters'],
      operationId: 'createRssNewsletter',
      summary: 'Create an RSS newsletter',
      description: `The feed is read once and every item in it is marked seen (the baseline): the back catalogue is never mailed; only items that appear later make issues. A feed that cannot be read creates nothing. New newsletters are \`ACTIVE\` and polled every \`RSS_POLL_INTERVAL_SECONDS\` (operator setting, default 600). Items are identified by guid, else link, else a hash of title and date; an item whose guid changed but whose link did not is not new.\n\n${RULES}`,
      parameters: [idempotencyKey],
      requestBody: body('RssNewsletterRequestDto'),
      responses: {
        ...responses('post', { '201': created('Created (baseline taken).', 'RssNewsletter') }, { 400: ['feed_not_allowed', 'rss_schedule_invalid'], 404: ['sender_profile_not_found', 'segment_not_found', 'topic_not_found'] }),
        '422': errorResponse('The templates fail their test render (`template_render_failed`), the feed could not be read (the reason is the errorId), or the Idempotency-Key was used for a different request.', ['template_render_failed', ...RSS_FEED_ERRORS_422, 'idempotency_key_reused'], rateLimitHeaders),
      },
    },
  },
  '/rss-newsletters/preview': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'previewRssFeed',
      summary: 'Preview a feed',
      description: `Reads any feed URL (no newsletter needed) and answers its title, site and items in feed order. ${FEED}`,
      parameters: [idempotencyKey],
      requestBody: body('RssNewsletterPreviewRequestDto'),
      responses: { ...responses('post', { '200': posted('The feed.', 'RssFeedPreview') }, { 400: ['feed_not_allowed'] }), '422': feedErrors422() },
    },
  },
  '/rss-newsletters/{newsletterId}': {
    get: {
      tags: ['RSS newsletters'],
      operationId: 'getRssNewsletter',
      summary: 'Get an RSS newsletter',
      description: NOT_FOUND,
      parameters: newsletterPath,
      responses: responses('get', { '200': ok('The newsletter.', schemaRef('RssNewsletter')) }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found'] }),
    },
    put: {
      tags: ['RSS newsletters'],
      operationId: 'updateRssNewsletter',
      summary: 'Replace an RSS newsletter',
      description: `Replaces every member of the body (omitted optional members take their defaults); status, waiting items and issues are kept. A changed \`sourceUrl\` is read and baselined like a create (422 when it cannot be read; nothing changes then). A changed trigger mode or schedule takes effect from now. ${NOT_FOUND}\n\n${RULES}`,
      parameters: newsletterPath,
      requestBody: body('RssNewsletterRequestDto'),
      responses: {
        ...responses('put', { '200': ok('The updated newsletter.', schemaRef('RssNewsletter')) }, {
          400: ['invalid_uuid', 'feed_not_allowed', 'rss_schedule_invalid'],
          404: ['rss_newsletter_not_found', 'sender_profile_not_found', 'segment_not_found', 'topic_not_found'],
        }),
        '422': errorResponse('The templates fail their test render, or the new feed could not be read (the reason is the errorId).', [...RSS_FEED_ERRORS_422, 'template_render_failed'], rateLimitHeaders),
      },
    },
    delete: {
      tags: ['RSS newsletters'],
      operationId: 'deleteRssNewsletter',
      summary: 'Delete an RSS newsletter',
      description: `Deletes the newsletter with its seen items and its issues. ${NOT_FOUND}`,
      parameters: newsletterPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found'] }),
    },
  },
  '/rss-newsletters/{newsletterId}/check': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'checkRssNewsletter',
      summary: 'Poll the feed now',
      description: `Reads the feed now, as the schedule would: new items are queued, and \`INSTANT\` (any new item) and \`THRESHOLD\` (\`minItems\` waiting) make an issue at once, answered as \`issueId\`; \`SCHEDULE\` newsletters only collect here, their issue comes at the next tick. \`newItems\` counts the items this read found. A feed that cannot be read is recorded as \`lastError\` and answered with its feed error (422, or 400 \`feed_not_allowed\`); no issue is made. A paused newsletter is \`409 rss_newsletter_paused\`; while the poller is reading the same feed, \`409 rss_check_in_progress\` (after up to 3 s). ${NOT_FOUND}`,
      parameters: [...newsletterPath, idempotencyKey],
      responses: {
        ...responses('post', { '200': posted('What the read found.', 'RssCheckResult') }, { 400: ['invalid_uuid', 'feed_not_allowed'], 404: ['rss_newsletter_not_found'], 409: ['rss_newsletter_paused', 'rss_check_in_progress'] }, { body: false }),
        '422': feedErrors422(),
      },
    },
  },
  '/rss-newsletters/{newsletterId}/pause': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'pauseRssNewsletter',
      summary: 'Pause an RSS newsletter',
      description: `No polls, ticks or issues while paused; issues already made are unaffected. Pausing a paused newsletter answers it unchanged. ${NOT_FOUND}`,
      parameters: [...newsletterPath, idempotencyKey],
      responses: responses('post', { '200': posted('The paused newsletter.', 'RssNewsletter') }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found'] }, { body: false }),
    },
  },
  '/rss-newsletters/{newsletterId}/resume': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'resumeRssNewsletter',
      summary: 'Resume an RSS newsletter',
      description: `\`rebaseline: true\`: the feed is read now and every item in it is marked seen, so items published while paused are never sent (a feed that cannot be read leaves the newsletter paused and answers the feed error). Without it (the body is optional) the feed is polled at once and items published while paused are treated as new. Resuming a newsletter that is not paused is \`409 rss_newsletter_not_paused\`. ${NOT_FOUND}`,
      parameters: [...newsletterPath, idempotencyKey],
      requestBody: body('RssResumeRequestDto', false),
      responses: {
        ...responses('post', { '200': posted('The resumed newsletter.', 'RssNewsletter') }, { 400: ['invalid_uuid', 'feed_not_allowed'], 404: ['rss_newsletter_not_found'], 409: ['rss_newsletter_not_paused'] }),
        '422': feedErrors422(),
      },
    },
  },
  '/rss-newsletters/{newsletterId}/issues': {
    get: {
      tags: ['RSS newsletters'],
      operationId: 'listRssIssues',
      summary: 'List issues (paginated)',
      description: `Newest first, each with its items. ${ISSUE_STATES} ${NOT_FOUND}`,
      parameters: [...newsletterPath, ref('parameters', 'PageNumber'), ref('parameters', 'PageSize')],
      responses: responses('get', { '200': ok('One page of issues.', schemaRef('PaginatedRssIssues')) }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found'] }),
    },
  },
  '/rss-newsletters/{newsletterId}/issues/{issueId}/release': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'releaseRssIssue',
      summary: 'Release an issue',
      description: `\`PENDING_REVIEW\` -> \`RELEASED\`; \`FAILED\` -> \`RELEASED\` again (the send resumes at its last queued page; \`releasedAt\` keeps the first release). ${ISSUE_STATES} An unknown issue is \`404 rss_issue_not_found\`. ${NOT_FOUND}`,
      parameters: [...issuePath, idempotencyKey],
      responses: responses('post', { '200': posted('The released issue.', 'RssIssue') }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found', 'rss_issue_not_found'], 409: ['rss_issue_not_pending_review'] }, { body: false }),
    },
  },
  '/rss-newsletters/{newsletterId}/issues/{issueId}/discard': {
    post: {
      tags: ['RSS newsletters'],
      operationId: 'discardRssIssue',
      summary: 'Discard an issue',
      description: `\`PENDING_REVIEW\` or \`FAILED\` -> \`DISCARDED\`: never sent (a \`FAILED\` issue: not sent further); its items are not offered again. ${ISSUE_STATES} An unknown issue is \`404 rss_issue_not_found\`. ${NOT_FOUND}`,
      parameters: [...issuePath, idempotencyKey],
      responses: responses('post', { '200': posted('The discarded issue.', 'RssIssue') }, { 400: ['invalid_uuid'], 404: ['rss_newsletter_not_found', 'rss_issue_not_found'], 409: ['rss_issue_not_pending_review'] }, { body: false }),
    },
  },
};

export const rssParameters = {
  RssNewsletterId: { name: 'newsletterId', in: 'path', required: true, schema: uuid },
  RssIssueId: { name: 'issueId', in: 'path', required: true, schema: uuid },
};

const nullable = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });
const url = { type: 'string', minLength: 1, maxLength: 2048 };
const range = (min: number, max: number, description: string) => nullable({ ...int32, minimum: min, maximum: max, description });

const item = {
  guid: { type: 'string' },
  title: { type: 'string' },
  link: { type: 'string' },
  publishedAt: { ...instant, type: ['string', 'null'] },
  summary: { type: 'string', description: 'HTML from the feed, sanitized (see the issue list: what is kept).' },
};

export const rssSchemas = {
  RssNewsletterRequestDto: object(['name', 'sourceUrl', 'triggerMode', 'senderProfileId', 'subjectPattern', 'htmlContent'], {
    id: { ...uuid, description: 'Ignored: the service assigns ids.' },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    sourceUrl: { ...url, description: 'The feed to read.', examples: ['https://blog.example.com/feed.xml'] },
    siteUrl: nullable({ ...url, description: 'Filled from the feed when absent.' }),
    feedUrl: nullable({ ...url, description: 'Filled from the feed when absent (the address the feed was read from after redirects).' }),
    feedTitle: nullable({ type: 'string', maxLength: 500, description: 'Filled from the feed when absent.' }),
    triggerMode: { type: 'string', enum: [...RSS_TRIGGER_MODES] },
    schedule: nullable({ type: 'string', maxLength: 200, description: 'SCHEDULE: 5-field cron, optionally prefixed `CRON_TZ=<IANA zone> `.', examples: ['CRON_TZ=Europe/Berlin 0 8 * * 1'] }),
    minItems: range(1, 1000, 'THRESHOLD: items that must wait before an issue is made.'),
    thresholdMaxAgeDays: range(1, 3650, 'THRESHOLD: older items drop out of the wait.'),
    releasePolicy: { type: 'string', enum: [...RSS_RELEASE_POLICIES], description: 'Default AUTO.' },
    reviewAutoReleaseMinutes: range(1, 43_200, 'REVIEW: a pending issue releases itself after this long.'),
    segmentId: nullable(uuid),
    senderProfileId: uuid,
    topicId: nullable(uuid),
    subjectPattern: { type: 'string', minLength: 1, maxLength: 998, description: 'Liquid with `items`, `newsletter`, `subscriber`.', examples: ['{{ newsletter.feedTitle }}: {{ items[0].title }}'] },
    htmlContent: { type: 'string', minLength: 1, maxLength: 262_144, description: 'Liquid with `items` (title, link, publishedAt, summary, content, author, imageUrl), `newsletter`, `subscriber`, `links`. `summary` and `content` are sanitized HTML and print as markup; every other value is escaped.' },
    cssContent: nullable({ type: 'string', maxLength: 262_144, description: 'Inlined into the HTML.' }),
    maxItemsPerIssue: range(1, 100, 'Default 10: the newest items go in; the rest wait for the next issue.'),
  }),
  RssNewsletterPreviewRequestDto: object(['url'], { url: { ...url, examples: ['https://blog.example.com/feed.xml'] } }),
  RssResumeRequestDto: object([], { rebaseline: { type: 'boolean', description: 'Mark every current item seen before resuming (default false).' } }),
  RssNewsletter: object(
    [
      'id', 'name', 'sourceUrl', 'siteUrl', 'feedUrl', 'feedTitle', 'triggerMode', 'schedule', 'minItems', 'thresholdMaxAgeDays', 'releasePolicy', 'reviewAutoReleaseMinutes',
      'segmentId', 'senderProfileId', 'topicId', 'subjectPattern', 'htmlContent', 'cssContent', 'maxItemsPerIssue', 'status', 'lastCheckedAt', 'lastItemPublishedAt', 'lastError', 'createdAt',
      'pendingItemCount', 'nextScheduledAt',
    ],
    {
      id: uuid,
      name: { type: 'string' },
      sourceUrl: { type: 'string' },
      siteUrl: { type: ['string', 'null'] },
      feedUrl: { type: ['string', 'null'] },
      feedTitle: { type: ['string', 'null'] },
      triggerMode: { type: 'string', enum: [...RSS_TRIGGER_MODES] },
      schedule: { type: ['string', 'null'] },
      minItems: nullable(int32),
      thresholdMaxAgeDays: nullable(int32),
      releasePolicy: { type: 'string', enum: [...RSS_RELEASE_POLICIES] },
      reviewAutoReleaseMinutes: nullable(int32),
      segmentId: { ...uuid, type: ['string', 'null'] },
      senderProfileId: uuid,
      topicId: { ...uuid, type: ['string', 'null'] },
      subjectPattern: { type: 'string' },
      htmlContent: { type: 'string' },
      cssContent: { type: 'string' },
      maxItemsPerIssue: int32,
      status: { type: 'string', enum: ['ACTIVE', 'PAUSED'] },
      lastCheckedAt: { ...instant, type: ['string', 'null'] },
      lastItemPublishedAt: { ...instant, type: ['string', 'null'] },
      lastError: { type: ['string', 'null'], description: 'Why the last read failed (`<feed error code>: <text>`); null after a successful read.' },
      createdAt: instant,
      pendingItemCount: { ...int32, description: 'Items found and waiting for an issue (SCHEDULE, THRESHOLD, maxItemsPerIssue carry-over).' },
      nextScheduledAt: { ...instant, type: ['string', 'null'], description: 'SCHEDULE: the next tick while ACTIVE.' },
    },
  ),
  RssNewsletterList: object(['items'], { items: { type: 'array', items: schemaRef('RssNewsletter') } }),
  RssFeedPreview: object(['feedTitle', 'siteUrl', 'items'], {
    feedTitle: { type: 'string' },
    siteUrl: { type: ['string', 'null'] },
    items: { type: 'array', items: object(Object.keys(item), item) },
  }),
  RssCheckResult: object(['newItems', 'issueId'], { newItems: { ...int32, minimum: 0 }, issueId: { ...uuid, type: ['string', 'null'], description: 'The issue this check made, if any.' } }),
  RssIssueItem: object(['guid', 'title', 'link', 'publishedAt', 'summary', 'content', 'author', 'imageUrl'], {
    ...item,
    content: { type: 'string', description: 'HTML from the feed, sanitized like `summary`.' },
    author: { type: 'string' },
    imageUrl: { type: 'string' },
  }),
  RssIssue: object(['id', 'status', 'itemCount', 'items', 'subject', 'createdAt', 'releasedAt', 'sentAt', 'recipientCount', 'deliveredCount', 'autoReleaseAt', 'lastError'], {
    id: uuid,
    status: { type: 'string', enum: [...RSS_ISSUE_STATUSES] },
    itemCount: int32,
    items: { type: 'array', items: schemaRef('RssIssueItem') },
    subject: { type: 'string', description: '`subjectPattern` rendered with the issue\'s items and the newsletter (no subscriber).' },
    createdAt: instant,
    releasedAt: { ...instant, type: ['string', 'null'] },
    sentAt: { ...instant, type: ['string', 'null'] },
    recipientCount: int32,
    deliveredCount: int32,
    autoReleaseAt: { ...instant, type: ['string', 'null'], description: 'PENDING_REVIEW with reviewAutoReleaseMinutes: when it releases itself.' },
    lastError: { type: ['string', 'null'], description: 'Why the last try to send it failed (`<errorId>: <text>`): set while `SENDING` is retried and on `FAILED`; null otherwise.', examples: ['segment_not_found: segment 3f1c2a4e-8d0b-4c1e-9f6a-2b7d5e8c9a01 does not exist'] },
  }),
  PaginatedRssIssues: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('RssIssue') },
    pageNumber: { ...int32, minimum: 1 },
    pageSize: { ...int32, minimum: 1 },
    totalItems: int64,
    totalPages: { ...int32, minimum: 0 },
  }),
};

export const rssTags = [{ name: 'RSS newsletters', description: 'RSS-to-email: feeds polled on a schedule, new items collected into issues (instantly, on a cron schedule or past a threshold), reviewed or released automatically.' }];
