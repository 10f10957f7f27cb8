/**
 * The projection repository on the embedded store: version gate, tombstones, catalog events, and
 * that facts the projection does not own survive a subscriber event.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { applyContactEvent } from '../src/app/project-contacts';
import { ContactProjection, MalformedEventError, type SubscriberEvent } from '../src/store/contacts';

let dir: string;
let store: Store;
let p: ContactProjection;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'segment-projection-'));
  store = await openStore({ dataDir: dir });
  p = new ContactProjection(store);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const A = 'acc-1';
function ev(type: string, version: number, over: Partial<SubscriberEvent['subscriber']> = {}, accountId = A): SubscriberEvent {
  return {
    type: `subscriber.${type}`,
    accountId,
    occurredAt: '2026-01-01T00:00:00.000Z',
    version,
    subscriber: {
      id: 's1',
      email: 'Ann@Example.org',
      firstName: 'Ann',
      subscriberStatus: 'ACTIVE',
      registeredAt: '2025-05-01T10:00:00.000Z',
      tags: [],
      topicIds: [],
      optOuts: [],
      fields: [],
      ...over,
    },
  };
}
const get = (id = 's1') => p.contacts.findOne({ _id: id });

it('maps the subscriber state into the Contact shape', async () => {
  await p.applySubscriberEvent(
    ev('created', 1, {
      tags: ['t2', 't1'],
      topicIds: ['n'],
      optOuts: [{ topicId: 'd', at: '2025-06-01T00:00:00.000Z' }],
      fields: [
        { fieldId: 'f-text', value: { kind: 'TEXT', text: 'ACME' } },
        { fieldId: 'f-num', value: { kind: 'NUMBER', number: 3 } },
        { fieldId: 'f-empty', value: { kind: 'TEXT', text: '' } },
        { fieldId: 'f-multi', value: { kind: 'MULTI_OPTION', optionIds: ['b', 'a'] } },
      ],
    }),
  );
  const c = await get();
  expect(c).toMatchObject({
    _id: 's1',
    accountId: A,
    email: 'ann@example.org',
    firstName: 'Ann',
    subscriberStatus: 'ACTIVE',
    registeredAt: new Date('2025-05-01T10:00:00.000Z'),
    tags: ['t1', 't2'],
    topics: ['n'],
    optOuts: [{ topicId: 'd', at: new Date('2025-06-01T00:00:00.000Z') }],
    orders: [],
    version: 1,
  });
  expect(c!.fields).toEqual({
    EMAIL: { text: 'ann@example.org', folded: 'ann@example.org' },
    FIRST_NAME: { text: 'Ann', folded: 'ann' },
    'f-text': { text: 'ACME', folded: 'acme' },
    'f-num': { number: 3 },
    'f-multi': { optionIds: ['a', 'b'] },
  });
});

it('out-of-order delivery keeps the highest version', async () => {
  expect(await p.applySubscriberEvent(ev('updated', 3, { tags: ['v3'] }))).toBe('applied');
  expect(await p.applySubscriberEvent(ev('created', 1, { tags: ['v1'] }))).toBe('stale');
  expect(await p.applySubscriberEvent(ev('updated', 2, { tags: ['v2'] }))).toBe('stale');
  expect(await get()).toMatchObject({ tags: ['v3'], version: 3 });
  expect(await p.applySubscriberEvent(ev('updated', 4, { tags: ['v4'] }))).toBe('applied');
  expect(await get()).toMatchObject({ tags: ['v4'], version: 4 });
});

it('duplicates (redelivery, and the fact events sharing a version) are no-ops', async () => {
  await p.applySubscriberEvent(ev('created', 1));
  expect(await p.applySubscriberEvent(ev('updated', 2, { tags: ['x'] }))).toBe('applied');
  expect(await p.applySubscriberEvent(ev('tag_added', 2, { tags: ['x'] }))).toBe('stale');
  expect(await p.applySubscriberEvent(ev('updated', 2, { tags: ['x'] }))).toBe('stale');
  expect(await p.contacts.countDocuments({ accountId: A })).toBe(1);
  expect(await get()).toMatchObject({ tags: ['x'], version: 2 });
});

it('concurrent deliveries of one subscriber converge on the highest version', async () => {
  const versions = [5, 2, 7, 1, 6, 3, 4];
  await Promise.all(versions.map((v) => p.applySubscriberEvent(ev('updated', v, { tags: [`v${v}`] }))));
  expect(await get()).toMatchObject({ tags: ['v7'], version: 7 });
});

it('delete then a late older update does not resurrect the contact', async () => {
  await p.applySubscriberEvent(ev('created', 1));
  await p.applySubscriberEvent(ev('updated', 2));
  expect(await p.applySubscriberEvent(ev('deleted', 4))).toBe('applied');
  expect(await get()).toBeNull();
  expect(await p.applySubscriberEvent(ev('updated', 3, { tags: ['late'] }))).toBe('stale');
  expect(await p.applySubscriberEvent(ev('deleted', 4))).toBe('stale');
  expect(await get()).toBeNull();
});

it('a delete delivered before the create leaves nothing', async () => {
  expect(await p.applySubscriberEvent(ev('deleted', 2))).toBe('applied');
  expect(await p.applySubscriberEvent(ev('created', 1))).toBe('stale');
  expect(await get()).toBeNull();
});

it('keeps orders and engagement facts when a subscriber event replaces the subscriber part', async () => {
  await p.applySubscriberEvent(ev('created', 1));
  const delivered = new Date('2026-01-02T00:00:00.000Z');
  const order = { orderId: 'o1', sourceId: 'src', orderedAt: new Date('2026-01-01T00:00:00.000Z'), currency: 'EUR', amount: 10, couponCode: null, items: [{ productId: 'p', variantId: null, groupId: null }] };
  await p.contacts.updateOne({ _id: 's1' }, { $set: { orders: [order], lastDeliveredAt: delivered, firstUnansweredDeliveryAt: delivered } });
  await p.applySubscriberEvent(ev('updated', 2, { firstName: null, subscriberStatus: 'UNSUBSCRIBED' }));
  const c = await get();
  expect(c).toMatchObject({ firstName: null, subscriberStatus: 'UNSUBSCRIBED', lastDeliveredAt: delivered, firstUnansweredDeliveryAt: delivered, version: 2 });
  expect(c!.orders).toHaveLength(1);
  expect(c!.orders[0].orderId).toBe('o1');
  expect(c!.fields.FIRST_NAME).toBeUndefined();
});

it('catalog deletions remove the tag / topic / field from every contact of the account only', async () => {
  const state = {
    tags: ['keep', 'gone'],
    topicIds: ['news', 'old'],
    optOuts: [{ topicId: 'old', at: '2025-06-01T00:00:00.000Z' }],
    fields: [
      { fieldId: 'fa', value: { kind: 'TEXT' as const, text: 'a' } },
      { fieldId: 'fb', value: { kind: 'NUMBER' as const, number: 1 } },
    ],
  };
  await p.applySubscriberEvent(ev('created', 1, { ...state, id: 's1' }));
  await p.applySubscriberEvent(ev('created', 1, { ...state, id: 's2', email: 'b@example.org' }));
  await p.applySubscriberEvent(ev('created', 1, { ...state, id: 'o1', email: 'o@example.org' }, 'other'));
  await applyContactEvent({ projection: p }, { type: 'tag.deleted', accountId: A, tag: { id: 'gone', name: 'Gone' } }, 10);
  await applyContactEvent({ projection: p }, { type: 'topic.deleted', accountId: A, topic: { id: 'old' } }, 11);
  await applyContactEvent({ projection: p }, { type: 'field.deleted', accountId: A, field: { id: 'fb' } }, 12);
  for (const id of ['s1', 's2']) {
    const c = await get(id);
    expect(c).toMatchObject({ tags: ['keep'], topics: ['news'], optOuts: [] });
    expect(Object.keys(c!.fields).sort()).toEqual(['EMAIL', 'FIRST_NAME', 'fa']);
  }
  const other = await get('o1');
  expect(other).toMatchObject({ tags: ['gone', 'keep'], topics: ['news', 'old'] });
  expect(Object.keys(other!.fields)).toContain('fb');

  // a late older event still listing the deleted items cannot bring them back; a new contact neither
  await p.applySubscriberEvent(ev('updated', 2, { ...state, id: 's1' }), 5);
  await p.applySubscriberEvent(ev('created', 1, { ...state, id: 's3', email: 'c@example.org' }), 6);
  for (const id of ['s1', 's3']) {
    const c = await get(id);
    expect(c).toMatchObject({ tags: ['keep'], topics: ['news'], optOuts: [] });
    expect(Object.keys(c!.fields).sort()).toEqual(['EMAIL', 'FIRST_NAME', 'fa']);
  }
});

it('topic.created with enrolled subscribers subscribes the contacts from before it, except opt-outs', async () => {
  await p.applySubscriberEvent(ev('created', 1, { id: 's1' }), 1);
  await p.applySubscriberEvent(ev('created', 1, { id: 's2', email: 'b@example.org', optOuts: [{ topicId: 'T', at: '2025-06-01T00:00:00.000Z' }] }), 2);
  // s3's state is from after the topic (applied before it, e.g. a redelivered topic.created): untouched
  await p.applySubscriberEvent(ev('created', 1, { id: 's3', email: 'c@example.org' }), 20);
  await applyContactEvent({ projection: p }, { type: 'topic.created', accountId: A, topic: { id: 'T' }, enrolledExistingSubscribers: true }, 10);
  expect((await get('s1'))!.topics).toEqual(['T']);
  expect((await get('s2'))!.topics).toEqual([]);
  expect((await get('s3'))!.topics).toEqual([]);
  // a subscriber event from before the enrollment applied late gets the topic too
  await p.applySubscriberEvent(ev('created', 1, { id: 's4', email: 'd@example.org' }), 3);
  expect((await get('s4'))!.topics).toEqual(['T']);
  // not enrolling: nothing happens
  expect(await applyContactEvent({ projection: p }, { type: 'topic.created', accountId: A, topic: { id: 'U' }, enrolledExistingSubscribers: false }, 30)).toBe('ignored');
});

it('malformed payloads are rejected with MalformedEventError; unrelated types are ignored', async () => {
  await expect(applyContactEvent({ projection: p }, { type: 'subscriber.updated', accountId: A, version: 'x', subscriber: {} })).rejects.toBeInstanceOf(MalformedEventError);
  await expect(applyContactEvent({ projection: p }, { type: 'subscriber.updated', accountId: A, version: 2 })).rejects.toBeInstanceOf(MalformedEventError);
  await expect(applyContactEvent({ projection: p }, { type: 'tag.deleted', accountId: A })).rejects.toBeInstanceOf(MalformedEventError);
  expect(await applyContactEvent({ projection: p }, { type: 'form.created', accountId: A })).toBe('ignored');
  expect(await applyContactEvent({ projection: p }, { type: 'tag.created', accountId: A, tag: { id: 'x' } })).toBe('ignored');
});
