// Facts the messaging, form and rss services will publish on DOMAIN (the API contract "Delivery facts",
// "Events and automations", "Forms", "RSS newsletters"; the webhook service forwards them as `data`).
// Defined now so those services fill in producers against a fixed contract; the segment service
// already consumes email.delivered / opened / clicked.
import { z } from 'zod';
import { envelope, id, instant, json } from './schema';

export const EMAIL_KINDS = ['TRANSACTIONAL', 'AUTOMATION', 'RSS', 'BROADCAST'] as const;

/**
 * the API contract's delivery fact `{messageId, accountId, email, subscriberId, kind, templateName,
 * eventProperties, at, machine?}`: `at` is the envelope's occurredAt. subscriberId is null for a
 * transactional mail to an address that is no subscriber; templateName is null for RSS mail.
 */
const emailFact = <T extends string, M extends z.ZodRawShape>(type: T, members: M) =>
  z.object({
    ...envelope(type),
    messageId: id,
    email: id,
    subscriberId: id.nullable(),
    kind: z.enum(EMAIL_KINDS),
    templateName: z.string().nullable(),
    eventProperties: z.record(z.string(), z.unknown()).nullable(),
    ...members,
  });

/** Opens and clicks within 2 s of delivery or from a known proxy/scanner are `machine` (never a response). */
const machine = { machine: z.boolean() };

export const emailFacts = {
  /** The SMTP relay answered 250. */
  'email.sent': emailFact('email.sent', { smtpCode: z.number().int(), response: z.string() }),
  'email.delivered': emailFact('email.delivered', {}),
  'email.bounced': emailFact('email.bounced', { bounceType: z.enum(['HARD', 'SOFT']), diagnosticCode: z.string().nullable() }),
  'email.opened': emailFact('email.opened', machine),
  'email.clicked': emailFact('email.clicked', { ...machine, url: z.string() }),
  'email.complained': emailFact('email.complained', { topicId: id.nullable() }),
};

export const FORM_DECISIONS = [
  'QUEUED',
  'CONFIRMATION_MAIL_ALREADY_SENT',
  'SUPPRESSED_ALREADY_SUBSCRIBED',
  'SUPPRESSED_COOLDOWN',
  'SUPPRESSED_SUBSCRIBER_LIMIT',
  'SUPPRESSED_CUSTOMER_LIMIT',
  'SUPPRESSED_SUBSCRIBER_POLICY',
] as const;

export const EVENT_OUTCOMES = ['RUNS_STARTED', 'NO_MATCHING_AUTOMATION', 'NOT_TRIGGERED', 'NO_SUBSCRIBER', 'SUBSCRIBER_CREATED'] as const;

export const otherFacts = {
  /** decision is null for a single opt-in form; subscriberId null when no subscriber was created. */
  'form.submitted': z.object({
    ...envelope('form.submitted'),
    formId: id,
    submissionId: id,
    email: id,
    subscriberId: id.nullable(),
    decision: z.enum(FORM_DECISIONS).nullable(),
  }),
  /** The custom event as the messaging service recorded it (GET /events item). */
  'event.received': z.object({
    ...envelope('event.received'),
    eventId: id,
    eventKey: id,
    email: id,
    receivedAt: instant,
    properties: json,
    triggerAutomations: z.boolean(),
    subscriberId: id.nullable(),
    outcome: z.enum(EVENT_OUTCOMES),
    runIds: z.array(id),
    /**
     * The double opt-in decision of an event that carried consent (a form decision such as QUEUED), null
     * without consent. Facts published before it existed parse as null.
     */
    consentDecision: z.string().nullable().default(null),
  }),
  /** Every recipient's mail of the broadcast is queued (the broadcast is SENT). */
  'broadcast.sent': z.object({
    ...envelope('broadcast.sent'),
    broadcastId: id,
    recipientCount: z.number().int().min(0),
  }),
  /** Every recipient's mail of the issue is queued. */
  'rss.issue_sent': z.object({
    ...envelope('rss.issue_sent'),
    newsletterId: id,
    issueId: id,
    itemCount: z.number().int().min(0),
    recipientCount: z.number().int().min(0),
  }),
};
