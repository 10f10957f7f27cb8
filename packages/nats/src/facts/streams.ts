// The messages of the EVENTS and JOBS streams (DOMAIN facts are in index.ts).
import { z } from 'zod';
import { id, instant, json, parseWith } from './schema';

/** A custom event posted to /events, stored on EVENTS as `events.<accountId>` (the gateway publishes it, messaging reads it). */
export const customEvent = z.object({
  eventId: id,
  accountId: id,
  eventKey: id,
  email: id,
  occurredAt: instant,
  receivedAt: instant,
  triggerAutomations: z.boolean(),
  properties: json,
  consent: z.object({ source: z.string(), givenAt: instant }).nullable(),
});
export type CustomEvent = z.infer<typeof customEvent>;

export const customEventSubject = (accountId: string) => `events.${accountId}`;
export const parseCustomEvent = (data: unknown): CustomEvent => parseWith(customEvent, data, 'custom event');

/**
 * Work items on JOBS (work queue: removed once acked). A job carries ids only; the record it points
 * at (the message, the delivery) is the truth, so a redelivered job never does the work twice.
 */
export const jobs = {
  /** jobs.email.<accountId>: deliver the stored (already rendered) message. */
  email: z.object({ accountId: id, messageId: id }),
  /**
   * jobs.webhook.<accountId>: attempt stored deliveries of one subscription (those one fan-out batch
   * made for it, or the one a redelivery or test event made): one job per batch, not per delivery.
   */
  webhook: z.object({ accountId: id, subscriptionId: id, deliveryIds: z.array(id).min(1).max(1000) }),
  /**
   * jobs.subscriber-status.<accountId>: tell the subscriber service the delivery outcome of the
   * message's recipient (hard bounce: BOUNCED; complaint: COMPLAINED and opted out of the mail's topic).
   */
  'subscriber-status': z.object({ accountId: id, messageId: id, status: z.enum(['BOUNCED', 'COMPLAINED']) }),
  /** jobs.form-submission.<accountId>: decide the stored public submission (double opt-in decision, signup, confirmation mail). */
  'form-submission': z.object({ accountId: id, submissionId: id }),
  /** jobs.automation-run.<accountId>: execute the run's steps from its first unfinished one (the run record is the truth). */
  'automation-run': z.object({ accountId: id, runId: id }),
};
export type JobKind = keyof typeof jobs;
export type Job<K extends JobKind> = z.infer<(typeof jobs)[K]>;

/** The subject and payload of a job, for publish(). */
export function job<K extends JobKind>(kind: K, payload: Job<K>): { subject: string; payload: Job<K> } {
  return { subject: `jobs.${kind}.${payload.accountId}`, payload };
}

/** Every subject of one kind of job (any account): what its producers publish and its consumer reads. */
export const jobSubjects = (kind: JobKind): string => `jobs.${kind}.>`;

/** Parses a JOBS message of the given kind; throws MalformedFactError. */
export function parseJob<K extends JobKind>(kind: K, data: unknown): Job<K> {
  return parseWith(jobs[kind], data, `${kind} job`) as Job<K>;
}
