/**
 * The shared fact definitions (@mailer/nats/facts): one valid sample of every DOMAIN fact type, the
 * EVENTS custom event and each JOBS message survives a JSON round trip through its parser unchanged,
 * and a message missing a member or holding one of the wrong type is rejected with a reason that
 * names the member. Producer/consumer agreement across services: test/facts-contract.test.ts.
 */
import {
  customEventSubject,
  domainFact,
  FACT_TYPES,
  job,
  MalformedFactError,
  parseCustomEvent,
  parseDomainFact,
  parseFact,
  parseJob,
  type CustomEvent,
  type Fact,
  type FactType,
} from '@mailer/nats/facts';

const at = '2026-03-01T10:00:00.000Z';
const env = <T extends FactType>(type: T) => ({ type, accountId: 'acc-1', occurredAt: at });
const contact = {
  id: 's1',
  email: 'ann@example.org',
  firstName: 'Ann',
  subscriberStatus: 'ACTIVE' as const,
  registeredAt: at,
  tags: ['t1'],
  topicIds: ['n1'],
  optOuts: [{ topicId: 'n2', at, source: 'unsubscribe_link' }],
  fields: [
    { fieldId: 'f1', personalizationTagName: 'COMPANY', value: { kind: 'TEXT' as const, text: 'Acme' } },
    { fieldId: 'f2', personalizationTagName: 'SIZE', value: { kind: 'MULTI_OPTION' as const, optionIds: ['o1'], labels: ['S'] } },
  ],
};
const sub = <T extends FactType>(type: T) => ({ ...env(type), version: 3, subscriber: contact });
const field = { id: 'f1', label: 'Company', personalizationTagName: 'COMPANY', fieldType: 'TEXT' as const, required: false, internal: false, active: true, position: 2, options: [] };
const tag = { id: 't1', name: 'VIP', createdAt: at };
const topic = { id: 'n1', label: 'News', description: null, active: true, isDefault: false, createdAt: at };
const mail = <T extends FactType>(type: T) => ({
  ...env(type),
  messageId: 'm1',
  email: 'ann@example.org',
  subscriberId: 's1',
  kind: 'AUTOMATION' as const,
  templateName: 'welcome',
  eventProperties: { orderId: 42 },
});

/** One valid fact of every type: adding a fact type without a sample here fails the first test. */
const SAMPLES: { [T in FactType]: Fact<T> } = {
  'subscriber.created': sub('subscriber.created'),
  'subscriber.deleted': sub('subscriber.deleted'),
  'subscriber.updated': { ...sub('subscriber.updated'), changes: ['email', 'tags'] },
  'subscriber.confirmed': { ...sub('subscriber.confirmed'), previousStatus: 'UNCONFIRMED' },
  'subscriber.unsubscribed': { ...sub('subscriber.unsubscribed'), previousStatus: 'ACTIVE' },
  'subscriber.tag_added': { ...sub('subscriber.tag_added'), tagId: 't1' },
  'subscriber.tag_removed': { ...sub('subscriber.tag_removed'), tagId: 't0' },
  'subscriber.topics_changed': { ...sub('subscriber.topics_changed'), added: ['n1'], removed: [] },
  'subscriber.topic_opted_out': { ...sub('subscriber.topic_opted_out'), topicId: 'n2', at, source: 'api' },
  'subscriber.field_values_changed': { ...sub('subscriber.field_values_changed'), fieldIds: ['f1'] },
  'field.created': { ...env('field.created'), field },
  'field.updated': { ...env('field.updated'), field },
  'field.archived': { ...env('field.archived'), field: { ...field, active: false } },
  'field.restored': { ...env('field.restored'), field },
  'field.deleted': { ...env('field.deleted'), field, removedFromSubscribers: 12 },
  'tag.created': { ...env('tag.created'), tag },
  'tag.renamed': { ...env('tag.renamed'), tag, previousName: 'Gold' },
  'tag.deleted': { ...env('tag.deleted'), tag, removedFromSubscribers: 0 },
  'topic.created': { ...env('topic.created'), topic, enrolledExistingSubscribers: true, enrolledCount: 5 },
  'topic.updated': { ...env('topic.updated'), topic },
  'topic.deleted': { ...env('topic.deleted'), topic, removedFromSubscribers: 3 },
  'email.sent': { ...mail('email.sent'), smtpCode: 250, response: '250 2.0.0 OK queued' },
  'email.delivered': mail('email.delivered'),
  'email.bounced': { ...mail('email.bounced'), bounceType: 'HARD', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
  'email.opened': { ...mail('email.opened'), machine: false },
  'email.clicked': { ...mail('email.clicked'), machine: true, url: 'https://example.org/a' },
  'email.complained': { ...mail('email.complained'), topicId: 'n1' },
  'form.submitted': { ...env('form.submitted'), formId: 'fm1', submissionId: 'sb1', email: 'ann@example.org', subscriberId: 's1', decision: 'QUEUED' },
  'event.received': {
    ...env('event.received'),
    eventId: 'e1',
    eventKey: 'order.paid',
    email: 'ann@example.org',
    receivedAt: at,
    properties: { orderId: 42 },
    triggerAutomations: true,
    subscriberId: null,
    outcome: 'NO_SUBSCRIBER',
    runIds: [],
    consentDecision: 'QUEUED',
  },
  'rss.issue_sent': { ...env('rss.issue_sent'), newsletterId: 'r1', issueId: 'i1', itemCount: 3, recipientCount: 1200 },
  'broadcast.sent': { ...env('broadcast.sent'), broadcastId: 'b1', recipientCount: 5000 },
};

const wire = (x: unknown) => JSON.parse(JSON.stringify(x));
/** A value of the wrong type for whatever `v` is. */
const wrong = (v: unknown) => (typeof v === 'string' || v === null ? 42 : 'a string');
const rejection = (fn: () => unknown): MalformedFactError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof MalformedFactError) return err;
    throw err;
  }
  throw new Error('was accepted');
};

it('every fact type has a sample, and every sample round-trips through JSON and its parser unchanged', () => {
  expect(Object.keys(SAMPLES).sort()).toEqual([...FACT_TYPES].sort());
  for (const type of FACT_TYPES) {
    const msg = domainFact(SAMPLES[type]);
    expect(msg.subject).toBe(`domain.${type}`);
    expect(parseDomainFact(wire(msg.payload))).toEqual(SAMPLES[type]);
    expect(parseFact(type, wire(msg.payload))).toEqual(SAMPLES[type]);
  }
});

/** Members a fact type gained after it was first published; a fact from before still parses (test below). */
const ADDED_LATER = new Set(['consentDecision']);

it('a fact published before a member was added parses with its default: event.received without consentDecision is null', () => {
  const { consentDecision: _added, ...before } = wire(SAMPLES['event.received']);
  expect(parseFact('event.received', before)).toEqual({ ...SAMPLES['event.received'], consentDecision: null });
});

it('a fact missing any member is rejected, and the reason names the member', () => {
  for (const type of FACT_TYPES) {
    for (const key of Object.keys(SAMPLES[type])) {
      if (ADDED_LATER.has(key)) continue; // members added after facts were published: absent reads as their default
      const broken: Record<string, unknown> = wire(SAMPLES[type]);
      delete broken[key];
      const err = rejection(() => parseFact(type, broken));
      expect(err.message).toContain(`malformed ${type} fact: ${key}`);
    }
  }
});

it('a member of the wrong type is rejected, and the reason names the member', () => {
  for (const type of FACT_TYPES) {
    for (const [key, value] of Object.entries(SAMPLES[type])) {
      if (key === 'properties' || key === 'eventProperties') continue; // any JSON value (an object of anything) by definition
      const broken = { ...wire(SAMPLES[type]), [key]: wrong(value) };
      expect(rejection(() => parseFact(type, broken)).reason).toMatch(new RegExp(`^${key}: `));
    }
  }
});

it('nested members are named by their path; unknown types and non-objects are rejected', () => {
  const noEmail = wire(SAMPLES['subscriber.updated']);
  delete noEmail.subscriber.email;
  expect(rejection(() => parseDomainFact(noEmail)).message).toBe('malformed subscriber.updated fact: subscriber.email: Invalid input: expected string, received undefined');
  const badValue = wire(SAMPLES['subscriber.created']);
  badValue.subscriber.fields[0].value = { kind: 'NUMBER', number: 'three' };
  expect(rejection(() => parseDomainFact(badValue)).reason).toMatch(/^subscriber\.fields\.0\.value\.number: /);
  const badTime = { ...wire(SAMPLES['email.opened']), occurredAt: 'yesterday' };
  expect(rejection(() => parseDomainFact(badTime)).reason).toBe('occurredAt: must be an ISO 8601 instant');
  expect(rejection(() => parseFact('email.opened', { ...wire(SAMPLES['email.opened']), kind: 'BULK' })).reason).toMatch(/^kind: /);
  expect(rejection(() => parseDomainFact({ ...SAMPLES['tag.created'], type: 'tag.exploded' })).reason).toBe('type: "tag.exploded" is not a known fact type');
  expect(rejection(() => parseDomainFact(null)).reason).toBe('type: null is not a known fact type');
  // the type member must match the definition it is parsed with
  expect(rejection(() => parseFact('tag.created', SAMPLES['tag.deleted'])).reason).toMatch(/^type: /);
});

it('the EVENTS custom event and the JOBS messages: subject, round trip, rejection', () => {
  const event: CustomEvent = {
    eventId: 'e1',
    accountId: 'acc-1',
    eventKey: 'order.paid',
    email: 'ann@example.org',
    occurredAt: at,
    receivedAt: at,
    triggerAutomations: true,
    properties: {},
    consent: { source: 'checkout', givenAt: at },
  };
  expect(customEventSubject('acc-1')).toBe('events.acc-1');
  expect(parseCustomEvent(wire(event))).toEqual(event);
  expect(parseCustomEvent(wire({ ...event, consent: null }))).toEqual({ ...event, consent: null });
  for (const key of Object.keys(event)) {
    const broken: Record<string, unknown> = wire(event);
    delete broken[key];
    expect(rejection(() => parseCustomEvent(broken)).message).toContain(`malformed custom event: ${key}`);
  }

  const email = job('email', { accountId: 'acc-1', messageId: 'm1' });
  expect(email.subject).toBe('jobs.email.acc-1');
  expect(parseJob('email', wire(email.payload))).toEqual({ accountId: 'acc-1', messageId: 'm1' });
  const webhook = job('webhook', { accountId: 'acc-1', subscriptionId: 'w1', deliveryIds: ['d1', 'd2'] });
  expect(webhook.subject).toBe('jobs.webhook.acc-1');
  expect(parseJob('webhook', wire(webhook.payload))).toEqual(webhook.payload);
  expect(rejection(() => parseJob('email', { accountId: 'acc-1' })).message).toBe('malformed email job: messageId: Invalid input: expected string, received undefined');
  expect(rejection(() => parseJob('webhook', { ...webhook.payload, deliveryIds: ['d1', ''] })).reason).toBe('deliveryIds.1: must not be empty');
  expect(rejection(() => parseJob('webhook', { ...webhook.payload, deliveryIds: [] })).reason).toContain('deliveryIds');
  // A job of the format before batches (one delivery each) is refused; its delivery stays due in the store.
  expect(rejection(() => parseJob('webhook', { accountId: 'acc-1', subscriptionId: 'w1', deliveryId: 'd1', eventId: 'e1' })).reason).toContain('deliveryIds');
  const status = job('subscriber-status', { accountId: 'acc-1', messageId: 'm1', status: 'COMPLAINED' });
  expect(status.subject).toBe('jobs.subscriber-status.acc-1');
  expect(parseJob('subscriber-status', wire(status.payload))).toEqual(status.payload);
  expect(rejection(() => parseJob('subscriber-status', { ...status.payload, status: 'ACTIVE' })).message).toContain('malformed subscriber-status job: status');
});
