/**
 * Contract between the producers and consumers of DOMAIN facts. The subscriber service's real event
 * constructors produce every fact type it can publish; each must parse with the shared definition
 * (@mailer/nats/facts) without losing a member (a member the definition does not know would be
 * dropped, so it fails here), and the segment service's projection, on a real embedded store, must
 * apply every one of them and build the contact they describe. A producer or consumer drifting
 * from the definition (a member missing, renamed or of another type) fails this test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { domainFact, FACT_TYPES, parseDomainFact, type DomainMessage } from '@mailer/nats/facts';
import { changeEvents, createdEvent, deletedEvent } from '../services/subscriber/src/events/subscriber-events';
import { fieldEvent, tagEvent, topicEvent } from '../services/subscriber/src/events/catalog-events';
import { diffSubscriber } from '../services/subscriber/src/domain/contacts';
import { Catalog } from '../services/subscriber/src/domain/fields';
import type { FieldDef, FieldType, SubscriberState } from '../services/subscriber/src/domain/types';
import { applyContactEvent } from '../services/segment/src/app/project-contacts';
import { ContactProjection, MalformedEventError } from '../services/segment/src/store/contacts';

const A = 'acc-contract';
const now = '2026-03-01T10:00:00.000Z';
const def = (id: string, fieldType: FieldType, position: number, options: string[] = []): FieldDef => ({
  id,
  label: id,
  personalizationTagName: id.toUpperCase().replace(/-/g, '_'),
  fieldType,
  required: false,
  internal: false,
  active: true,
  position,
  options: options.map((o, i) => ({ id: o, label: `Label ${o}`, position: i, active: true })),
});
const fields = [
  def('f-text', 'TEXT', 2),
  def('f-long', 'LONG_TEXT', 3),
  def('f-email', 'EMAIL', 4),
  def('f-num', 'NUMBER', 5),
  def('f-date', 'DATE', 6),
  def('f-bool', 'BOOLEAN', 7),
  def('f-one', 'SINGLE_CHOICE', 8, ['o1', 'o2']),
  def('f-many', 'MULTI_CHOICE', 9, ['m1', 'm2']),
];
const ctx = { catalog: new Catalog(fields) };
const tag = { id: 't-new', name: 'VIP', createdAt: now };
const topic = { id: 'n-new', label: 'News', description: null, active: true, isDefault: false, createdAt: now };

const before: SubscriberState = {
  id: 's1',
  email: 'ann@example.org',
  firstName: null,
  status: 'UNCONFIRMED',
  tags: ['t-old'],
  topicIds: ['n-old'],
  optOuts: [],
  fields: { 'f-text': 'Acme' },
  registeredAt: '2026-01-01T00:00:00.000Z',
  version: 1,
};
const after: SubscriberState = {
  ...before,
  email: 'ann.b@example.org',
  firstName: 'Ann',
  status: 'ACTIVE',
  tags: ['t-new'],
  topicIds: ['n-new'],
  optOuts: [{ topicId: 'n-old', at: now, source: 'unsubscribe_link' }],
  fields: { 'f-text': 'Acme Ltd', 'f-long': 'Long text', 'f-email': 'x@example.org', 'f-num': 7, 'f-date': '2026-02-01', 'f-bool': true, 'f-one': 'o2', 'f-many': ['m1', 'm2'] },
  version: 2,
};
const unsubscribed: SubscriberState = { ...after, status: 'UNSUBSCRIBED', version: 3 };

/** Everything the subscriber service's constructors can emit, in a plausible stream order. */
function produced(): DomainMessage[] {
  return [
    fieldEvent('created', A, fields[0], now),
    fieldEvent('updated', A, fields[0], now),
    fieldEvent('archived', A, { ...fields[1], active: false }, now),
    fieldEvent('restored', A, fields[1], now),
    tagEvent('created', A, tag, now),
    tagEvent('renamed', A, { ...tag, name: 'Gold' }, now, { previousName: 'VIP' }),
    topicEvent('created', A, topic, now, { enrolledExistingSubscribers: false, enrolledCount: 0 }),
    topicEvent('updated', A, { ...topic, label: 'Newsletter' }, now),
    createdEvent(A, before, ctx, now),
    ...changeEvents(A, before, after, diffSubscriber(before, after), ctx, now),
    ...changeEvents(A, after, unsubscribed, diffSubscriber(after, unsubscribed), ctx, now),
    tagEvent('deleted', A, { id: 't-gone', name: 'Gone', createdAt: now }, now, { removedFromSubscribers: 0 }),
    topicEvent('deleted', A, { ...topic, id: 'n-gone' }, now, { removedFromSubscribers: 0 }),
    fieldEvent('deleted', A, def('f-gone', 'NUMBER', 10), now, { removedFromSubscribers: 0 }),
    createdEvent(A, { ...before, id: 's2', email: 'bob@example.org', version: 1 }, ctx, now),
    deletedEvent(A, { ...before, id: 's2', email: 'bob@example.org', version: 1 }, ctx, now),
  ];
}
const wire = (x: unknown) => JSON.parse(JSON.stringify(x));

let dir: string;
let store: Store;
let projection: ContactProjection;
/** A DOMAIN event through the projection's use case, as its consumer applies it. */
const apply = (data: unknown, seq: number) => applyContactEvent({ projection }, data, seq);
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'facts-contract-'));
  store = await openStore({ dataDir: dir });
  projection = new ContactProjection(store);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('the subscriber service emits every subscriber, field, tag and topic fact type, each with its shared subject and definition', () => {
  const messages = produced();
  const owned = FACT_TYPES.filter((t) => /^(subscriber|field|tag|topic)\./.test(t));
  expect([...new Set(messages.map((m) => m.payload.type))].sort()).toEqual([...owned].sort());
  for (const m of messages) {
    expect(m.subject).toBe(`domain.${m.payload.type}`);
    // toEqual on the parsed copy: a member the definition does not declare would have been dropped
    expect(parseDomainFact(wire(m.payload))).toEqual(wire(m.payload));
  }
});

it('the segment projection applies every fact the subscriber service emits and builds the contact they describe', async () => {
  const outcomes = [];
  let seq = 0;
  for (const m of produced()) outcomes.push([m.payload.type, await apply(wire(m.payload), ++seq)]);
  expect(outcomes.filter(([, o]) => o instanceof MalformedEventError)).toEqual([]);
  expect(outcomes).toContainEqual(['subscriber.created', 'applied']);
  expect(outcomes).toContainEqual(['subscriber.updated', 'applied']);
  expect(outcomes).toContainEqual(['subscriber.deleted', 'applied']);

  const c = await projection.contacts.findOne({ _id: 's1', accountId: A });
  expect(c).toMatchObject({
    email: 'ann.b@example.org',
    firstName: 'Ann',
    subscriberStatus: 'UNSUBSCRIBED',
    tags: ['t-new'],
    topics: ['n-new'],
    optOuts: [{ topicId: 'n-old', at: new Date(now) }],
    version: 3,
  });
  expect(c!.fields).toEqual({
    EMAIL: { text: 'ann.b@example.org', folded: 'ann.b@example.org' },
    FIRST_NAME: { text: 'Ann', folded: 'ann' },
    'f-text': { text: 'Acme Ltd', folded: 'acme ltd' },
    'f-long': { text: 'Long text', folded: 'long text' },
    'f-email': { text: 'x@example.org', folded: 'x@example.org' },
    'f-num': { number: 7 },
    'f-date': { date: '2026-02-01' },
    'f-bool': { boolean: true },
    'f-one': { optionId: 'o2' },
    'f-many': { optionIds: ['m1', 'm2'] },
  });
  expect(await projection.contacts.findOne({ _id: 's2', accountId: A })).toBeNull();
});

it('the projection rejects a subscriber fact that breaks the definition, naming the member', async () => {
  const created = wire(createdEvent(A, before, ctx, now).payload);
  delete created.subscriber.registeredAt;
  await expect(apply(created, 1)).rejects.toThrow('malformed subscriber.created fact: subscriber.registeredAt: ');
  await expect(apply({ ...wire(createdEvent(A, before, ctx, now).payload), version: '2' }, 2)).rejects.toThrow(
    'malformed subscriber.created fact: version: ',
  );
  const optedOut = wire(changeEvents(A, before, after, diffSubscriber(before, after), ctx, now)[0].payload);
  optedOut.subscriber.fields[0].value = { kind: 'NUMBER', number: 'seven' };
  await expect(apply(optedOut, 3)).rejects.toBeInstanceOf(MalformedEventError);
  const deleted = wire(tagEvent('deleted', A, tag, now, { removedFromSubscribers: 0 }).payload);
  delete deleted.tag.id;
  await expect(apply(deleted, 4)).rejects.toThrow('malformed tag.deleted fact: tag.id: ');
});

it('email facts built with the shared definition drive the engagement facts; one without a subscriber is ignored', async () => {
  await apply(wire(createdEvent(A, before, ctx, now).payload), 1);
  const base = { accountId: A, messageId: 'm1', email: before.email, kind: 'AUTOMATION', templateName: 'welcome', eventProperties: null } as const;
  const delivered = domainFact({ ...base, type: 'email.delivered', occurredAt: '2026-03-02T00:00:00.000Z', subscriberId: 's1' });
  const opened = domainFact({ ...base, type: 'email.opened', occurredAt: '2026-03-03T00:00:00.000Z', subscriberId: 's1', machine: false });
  const strangers = domainFact({ ...base, type: 'email.clicked', occurredAt: '2026-03-04T00:00:00.000Z', subscriberId: null, machine: false, url: 'https://example.org' });
  expect(delivered.subject).toBe('domain.email.delivered');
  expect(await apply(wire(delivered.payload), 2)).toBe('applied');
  expect(await apply(wire(opened.payload), 3)).toBe('applied');
  expect(await apply(wire(strangers.payload), 4)).toBe('ignored');
  expect(await projection.contacts.findOne({ _id: 's1', accountId: A })).toMatchObject({
    lastDeliveredAt: new Date('2026-03-02T00:00:00.000Z'),
    lastResponseAt: new Date('2026-03-03T00:00:00.000Z'),
    firstUnansweredDeliveryAt: null,
  });
  await expect(apply({ ...wire(opened.payload), subscriberId: 42 }, 5)).rejects.toThrow('malformed email.opened fact: subscriberId: ');
});
