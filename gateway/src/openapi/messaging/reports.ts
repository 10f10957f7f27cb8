import { MAX_REPORT_POINTS, REPORT_ERROR_IDS, REPORT_INTERVALS } from '@mailer/reports';
import { ok, ref, schemaRef, type Json } from '../common';
import { ERROR_IDS_KEYWORD } from '../keywords';
import { body, idempotencyKey, object, responses } from '../operations';

/**
 * Reports (the API contract "Reports"): `ReportPeriodDto` in, a series of points of `Number`s out. The
 * period, its buckets and the Number are shared by every report (`reportPeriodSchemas`); each
 * report adds its path and its point schema.
 */

export const PERIOD_ERROR_IDS = Object.values(REPORT_ERROR_IDS);

const localDate = (description: string, example: string) => ({
  type: 'string',
  format: 'date',
  description,
  examples: [example],
  [ERROR_IDS_KEYWORD]: { format: REPORT_ERROR_IDS.periodInvalid },
});

export const reportPeriodSchemas = {
  ReportPeriodDto: object(
    ['fromDate', 'toDate', 'interval'],
    {
      fromDate: localDate('First day of the report (LocalDate, inclusive) in `timeZone`.', '2024-03-01'),
      toDate: localDate('Last day of the report (LocalDate, inclusive) in `timeZone`; not before `fromDate`.', '2024-03-31'),
      interval: {
        type: 'string',
        enum: [...REPORT_INTERVALS],
        description: 'Bucket size: calendar days, ISO weeks (Monday to Sunday), calendar months, quarters or years in `timeZone`.',
        [ERROR_IDS_KEYWORD]: { enum: REPORT_ERROR_IDS.periodInvalid },
      },
      timeZone: {
        type: ['string', 'null'],
        description: 'IANA time zone id the calendar is read in (default `UTC`), e.g. `Europe/Berlin`. Days follow the zone\'s clock: a day with a daylight-saving change lasts 23 or 25 hours.',
        examples: ['Europe/Berlin'],
      },
    },
    {
      description: `The period of a report. Refused with \`400\`: a date that is not an existing \`YYYY-MM-DD\` date, \`fromDate\` after \`toDate\` or an unknown \`interval\` (\`report_period_invalid\`); a \`timeZone\` that is not an IANA id (\`report_invalid_time_zone\`); more than ${MAX_REPORT_POINTS.toLocaleString('en-US')} points (\`report_too_many_points\`).`,
    },
  ),
  Number: object(['value', 'formattedValue'], {
    value: { type: 'integer', format: 'int64', minimum: 0, examples: [1234567] },
    formattedValue: {
      type: 'string',
      description: 'The value written for the request\'s `Accept-Language` (the best supported language by q-value; `en-US` when none is given or none is supported): `1,234,567` in en-US, `1.234.567` in de-DE.',
      examples: ['1,234,567'],
    },
  }),
};

const n = (value: number, formattedValue: string) => ({ value, formattedValue });
const emailPoint = (periodStart: string, counts: number[]) => {
  const [sent, delivered, opened, clicked, bounced, complained] = counts.map((c) => n(c, c.toLocaleString('en-US')));
  return { periodStart, sent, delivered, opened, clicked, bounced, complained };
};

const metric = (description: string) => ({ ...schemaRef('Number'), description });

export const emailReportSchemas = {
  EmailReportPoint: object(['periodStart', 'sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained'], {
    periodStart: { type: 'string', format: 'date', description: 'First day of the bucket inside the period: the later of the bucket\'s calendar start and `fromDate`.', examples: ['2024-03-01'] },
    sent: metric('Messages accepted by the relay in the bucket (by the time they were sent).'),
    delivered: metric('Messages confirmed delivered in the bucket.'),
    opened: metric('Messages whose first human open fell in the bucket (machine opens such as mail-privacy proxies do not count; a message counts once).'),
    clicked: metric('Messages whose first human click fell in the bucket (a message counts once).'),
    bounced: metric('Messages that bounced in the bucket.'),
    complained: metric('Messages marked as spam (complaint) in the bucket.'),
  }),
  EmailReport: object(['points'], { points: { type: 'array', maxItems: MAX_REPORT_POINTS, items: schemaRef('EmailReportPoint') } }, {
    examples: [{ points: [emailPoint('2024-03-01', [1250, 1238, 610, 142, 12, 1]), emailPoint('2024-03-04', [0, 0, 0, 0, 0, 0])] }],
  }),
};

const subscriberPoint = (periodStart: string, counts: number[]) => {
  const [newSubscribers, confirmed, unsubscribed] = counts.map((c) => n(c, c.toLocaleString('en-US')));
  return { periodStart, newSubscribers, confirmed, unsubscribed };
};

export const subscriberReportSchemas = {
  SubscriberReportPoint: object(['periodStart', 'newSubscribers', 'confirmed', 'unsubscribed'], {
    periodStart: { type: 'string', format: 'date', description: 'First day of the bucket inside the period: the later of the bucket\'s calendar start and `fromDate`.', examples: ['2024-03-01'] },
    newSubscribers: metric('Subscribers registered in the bucket (by `registeredAt`, whatever their status now; deleted subscribers no longer count).'),
    confirmed: metric('Subscribers whose status went from `UNCONFIRMED` to `ACTIVE` in the bucket (double opt-in confirmation or a status change; the latest confirmation counts).'),
    unsubscribed: metric('Subscribers whose status became `UNSUBSCRIBED` in the bucket (the latest such change counts). Opting out of topics does not change the status.'),
  }),
  SubscriberReport: object(['points'], { points: { type: 'array', maxItems: MAX_REPORT_POINTS, items: schemaRef('SubscriberReportPoint') } }, {
    examples: [{ points: [subscriberPoint('2024-03-01', [1250, 980, 12]), subscriberPoint('2024-03-04', [0, 0, 0])] }],
  }),
};

export const acceptLanguage = {
  name: 'Accept-Language',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: 'Language of every `formattedValue` (q-values honoured; default and fallback `en-US`).',
  examples: { german: { value: 'de-DE,de;q=0.9,en;q=0.8' } },
};

export const REPORT_DESCRIPTION = `Buckets follow the calendar in \`timeZone\` (default UTC). Every bucket that overlaps the period is a point, empty ones included, in order; \`periodStart\` is the later of the bucket's start and \`fromDate\`, and only days inside the period count (the first and last buckets may be partial). At most ${MAX_REPORT_POINTS.toLocaleString('en-US')} points. Not idempotent in its answer: counts grow as facts arrive, and a replay with the same \`Idempotency-Key\` answers the stored counts in the stored language.`;

export const reportPaths = {
  '/reports/subscribers': {
    post: {
      tags: ['Reports'],
      operationId: 'reportSubscribers',
      summary: 'Subscriber report: new, confirmed and unsubscribed subscribers per period',
      description: `${REPORT_DESCRIPTION}

Counts the account's subscribers by the time of each change: \`newSubscribers\` by \`registeredAt\`, \`confirmed\` when the status went from \`UNCONFIRMED\` to \`ACTIVE\`, \`unsubscribed\` when the status became \`UNSUBSCRIBED\`. A subscriber appears in several metrics, possibly in different buckets; deleted subscribers are not counted.`,
      parameters: [acceptLanguage, idempotencyKey] as Json[],
      requestBody: body('ReportPeriodDto'),
      responses: responses('post', { '200': ok('The points, one per bucket.', schemaRef('SubscriberReport'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) }, { 400: PERIOD_ERROR_IDS }),
    },
  },
  '/reports/emails': {
    post: {
      tags: ['Reports'],
      operationId: 'reportEmails',
      summary: 'Email report: sent, delivered, opened, clicked, bounced, complained per period',
      description: `${REPORT_DESCRIPTION}

Counts the account's email messages (transactional and automation alike) by the time of each fact: \`sent\` when the relay accepted the message, \`delivered\` when delivery was confirmed, \`opened\` and \`clicked\` at the first human open or click (a message counts once however often it is opened; machine opens and clicks do not count), \`bounced\` and \`complained\` when the bounce or complaint arrived. A message appears in several metrics, and a metric of a message may fall in a later bucket than its \`sent\`.`,
      parameters: [acceptLanguage, idempotencyKey] as Json[],
      requestBody: body('ReportPeriodDto'),
      responses: responses('post', { '200': ok('The points, one per bucket.', schemaRef('EmailReport'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) }, { 400: PERIOD_ERROR_IDS }),
    },
  },
};

export const reportTags = [{ name: 'Reports', description: 'Counts per calendar period in a time zone, each value with its text in the request\'s language.' }];
