// Rules of broadcasts (docs/integrators.md "Broadcasts and batch sending"), pure: the request's values, where a
// reader of the audience can end up, the A/B split and the winner.
import { createHash } from 'node:crypto';
import { invalid, type Problem } from '@mailer/kit';
import { compileTemplate, TemplateError } from '@mailer/templates';
import { IANAZone } from 'luxon';
import { TEMPLATE_NAME_PATTERN } from '../../templates/domain/email-template';

export const BROADCAST_STATUSES = ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED', 'FAILED'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/** Why a reader of the audience is not a recipient, in the order the rules apply. */
export const EXCLUSION_REASONS = ['NOT_ACTIVE', 'NOT_IN_TOPIC', 'OPTED_OUT', 'NOT_IN_SEGMENT', 'SEGMENT_UNKNOWN', 'SUPPRESSED'] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/**
 * Where a recipient's mail is: PENDING (not queued yet, or queued and not sent), then the status of
 * its message (SUPPRESSED: suppressed between queueing and sending). EXCLUDED readers are no recipients.
 */
export const RECIPIENT_STATUSES = ['PENDING', 'SENT', 'DELIVERED', 'DEFERRED', 'FAILED', 'BOUNCED', 'SUPPRESSED'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];
export type ReaderStatus = RecipientStatus | 'EXCLUDED';

/** A message's status as the recipient's: only QUEUED is named otherwise. */
export const recipientStatusOf = (messageStatus: string): RecipientStatus => (messageStatus === 'QUEUED' ? 'PENDING' : (messageStatus as RecipientStatus));

export const AB_METRICS = ['HUMAN_CLICKS', 'HUMAN_OPENS'] as const;
export type AbMetric = (typeof AB_METRICS)[number];

export interface AbTest {
  subjects: string[];
  testPercent: number;
  decideAfterMinutes: number;
  metric: AbMetric;
}

export interface SendWindow {
  startHour: number;
  endHour: number;
  /** personalizationTagName of a TEXT field holding the reader's IANA zone; null: defaultTimeZone for everyone. */
  timeZoneField: string | null;
  defaultTimeZone: string;
}

/** What a customer sets (BroadcastRequest). */
export interface BroadcastInput {
  name: string;
  templateName: string;
  senderProfileId: string | null;
  segmentId: string | null;
  topicId: string | null;
  subject: string | null;
  abTest: AbTest | null;
  sendWindow: SendWindow | null;
}

export type BroadcastRequest = {
  [K in keyof BroadcastInput]?: BroadcastInput[K] | undefined;
};

export const MAX_NAME = 200;
/** RFC 5322 keeps a header line under 998 characters. */
export const MAX_SUBJECT = 998;
const TAG_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const between = (n: unknown, min: number, max: number) => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;

/** Checks and normalizes a BroadcastRequest (the gateway's schema checked the shapes; a service never trusts its callers). */
export function broadcastValues(req: BroadcastRequest): BroadcastInput {
  const problems: Problem[] = [];
  const bad = (path: string, problem: string) => problems.push({ path: `body.${path}`, problem });
  const name = (req.name ?? '').trim();
  if (name.length < 1 || name.length > MAX_NAME) bad('name', `1 to ${MAX_NAME} characters`);
  const templateName = req.templateName ?? '';
  if (!TEMPLATE_NAME_PATTERN.test(templateName)) bad('templateName', `must match ${TEMPLATE_NAME_PATTERN.source}`);
  const id = (path: 'senderProfileId' | 'segmentId' | 'topicId') => {
    const v = req[path];
    if (v === undefined || v === null || v === '') return null;
    if (!ID.test(v.toLowerCase())) bad(path, 'not a UUID');
    return v.toLowerCase();
  };
  const subject = req.subject ?? null;
  if (subject !== null) liquidSubject(subject, 'subject', bad);
  const abTest = req.abTest ?? null;
  if (abTest) {
    if (subject !== null) bad('subject', 'give either subject or abTest.subjects, not both');
    if (!Array.isArray(abTest.subjects) || abTest.subjects.length < 2 || abTest.subjects.length > 4) bad('abTest.subjects', '2 to 4 subjects');
    else abTest.subjects.forEach((s, i) => liquidSubject(s, `abTest.subjects[${i}]`, bad));
    if (!between(abTest.testPercent, 10, 50)) bad('abTest.testPercent', 'an integer from 10 to 50');
    if (!between(abTest.decideAfterMinutes, 15, 1440)) bad('abTest.decideAfterMinutes', 'an integer from 15 to 1440');
    if (!AB_METRICS.includes(abTest.metric)) bad('abTest.metric', `one of ${AB_METRICS.join(', ')}`);
  }
  const w = req.sendWindow ?? null;
  if (w) {
    if (!between(w.startHour, 0, 23)) bad('sendWindow.startHour', 'an integer from 0 to 23');
    if (!between(w.endHour, 1, 24) || w.endHour <= w.startHour) bad('sendWindow.endHour', 'an integer from 1 to 24, after startHour');
    if (typeof w.defaultTimeZone !== 'string' || !isZone(w.defaultTimeZone)) bad('sendWindow.defaultTimeZone', 'not an IANA time zone');
    if (w.timeZoneField !== undefined && w.timeZoneField !== null && !TAG_NAME.test(w.timeZoneField)) bad('sendWindow.timeZoneField', `a personalizationTagName (${TAG_NAME.source})`);
  }
  const values: BroadcastInput = {
    name,
    templateName,
    senderProfileId: id('senderProfileId'),
    segmentId: id('segmentId'),
    topicId: id('topicId'),
    subject,
    abTest: abTest && { subjects: [...abTest.subjects], testPercent: abTest.testPercent, decideAfterMinutes: abTest.decideAfterMinutes, metric: abTest.metric },
    sendWindow: w && { startHour: w.startHour, endHour: w.endHour, timeZoneField: w.timeZoneField || null, defaultTimeZone: w.defaultTimeZone },
  };
  if (problems.length) throw invalid('validation_failed', `the broadcast is not valid: ${problems.map((p) => `${p.path} ${p.problem}`).join('; ')}`, problems);
  return values;
}

export const isZone = (zone: string): boolean => zone.length > 0 && zone.length <= 100 && IANAZone.isValidZone(zone);

/** A subject is a Liquid template of one line: it must parse (the render fills it per reader). */
function liquidSubject(subject: unknown, path: string, bad: (path: string, problem: string) => void): void {
  if (typeof subject !== 'string' || subject.trim().length === 0 || subject.length > MAX_SUBJECT) {
    bad(path, `1 to ${MAX_SUBJECT} characters`);
    return;
  }
  try {
    compileTemplate({ subject, html: '' });
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    bad(path, `${err.errorId}: ${err.details.map((d) => d.problem).join('; ') || err.message}`);
  }
}

/** The subject templates mail is rendered with, by variant (index 0 without an A/B test). */
export function variantSubjects(input: Pick<BroadcastInput, 'subject' | 'abTest'>, templateSubject: string): string[] {
  return input.abTest ? input.abTest.subjects : [input.subject ?? templateSubject];
}

/** A number in [0, 1) fixed by the broadcast and the reader: the same reader always lands in the same place. */
function position(broadcastId: string, subscriberId: string): number {
  return createHash('sha256').update(`${broadcastId}:${subscriberId}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The A/B split: a reader whose position falls below testPercent is in the test group, and the test
 * group is cut into as many equal slices as there are subjects (the variant); null: the rest, who get
 * the winner. Deterministic, and even over a large audience.
 */
export function testVariant(broadcastId: string, subscriberId: string, ab: Pick<AbTest, 'subjects' | 'testPercent'>): number | null {
  const p = position(broadcastId, subscriberId);
  const share = ab.testPercent / 100;
  if (p >= share) return null;
  return Math.min(ab.subjects.length - 1, Math.floor((p / share) * ab.subjects.length));
}

export interface VariantStats {
  delivered: number;
  humanOpens: number;
  humanClicks: number;
}

/**
 * The winner: the most human clicks (or opens) per delivered mail; a variant without delivered mail
 * scores 0; ties go to the lower index. Machine opens and clicks never reach these counts.
 */
export function pickWinner(stats: VariantStats[], metric: AbMetric): number {
  const score = (s: VariantStats) => (s.delivered > 0 ? (metric === 'HUMAN_CLICKS' ? s.humanClicks : s.humanOpens) / s.delivered : 0);
  let winner = 0;
  stats.forEach((s, i) => {
    if (score(s) > score(stats[winner])) winner = i;
  });
  return winner;
}
