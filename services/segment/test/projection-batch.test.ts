/**
 * applyContactEvents (app/project-contacts.ts) must leave exactly the state (contacts, tombstones, catalog, pending
 * orders) and report exactly the outcomes of applyContactEvent() on each event in turn: checked on a hand-written
 * batch and on random histories (created / updated / deleted / re-created out of order, duplicates,
 * catalog events in the batch, a subscriber claimed by two accounts, orders waiting for emails).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { applyContactEvent, applyContactEvents } from '../src/app/project-contacts';
import { ContactProjection, MalformedEventError, type BatchOutcome } from '../src/store/contacts';

const opened: Array<{ store: Store; dir: string }> = [];
async function fresh(): Promise<ContactProjection> {
  const dir = mkdtempSync(join(tmpdir(), 'segment-batch-'));
  const store = await openStore({ dataDir: dir });
  opened.push({ store, dir });
  return new ContactProjection(store);
}
afterEach(async () => {
  for (const { store, dir } of opened.splice(0)) {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const A = 'acc-a';
const B = 'acc-b';
interface Sub {
  id: string;
  email?: string;
  tags?: string[];
  topicIds?: string[];
  optOuts?: Array<{ topicId: string; at: string }>;
  fields?: Array<{ fieldId: string; value: { kind: string; [k: string]: unknown } }>;
  firstName?: string | null;
  subscriberStatus?: string;
}
function subEvent(type: string, version: number, s: Sub, accountId = A) {
  return {
    type: `subscriber.${type}`,
    accountId,
    occurredAt: '2026-01-01T00:00:00.000Z',
    version,
    subscriber: {
      email: `${s.id}@example.org`,
      firstName: 'Ann',
      subscriberStatus: 'ACTIVE',
      registeredAt: '2025-05-01T10:00:00.000Z',
      tags: [],
      topicIds: [],
      optOuts: [],
      fields: [],
      ...s,
    },
  };
}
const order = (n: number) => ({
  orderId: `o${n}`,
  sourceId: 'src',
  orderedAt: new Date(Date.UTC(2026, 0, n)).toISOString(),
  currency: 'EUR',
  amount: n,
  couponCode: null,
  items: [{ productId: `p${n}`, variantId: null, groupId: null }],
});

async function seedPending(p: ContactProjection, pending: Array<{ accountId: string; email: string; n: number }>) {
  for (const w of pending) await p.pendingOrders.insertOne({ _id: `pending-${w.n}`, accountId: w.accountId, email: w.email, order: order(w.n) as any });
}

const label = (o: BatchOutcome | 'malformed') => (o instanceof MalformedEventError ? 'malformed' : o);

async function oneByOne(p: ContactProjection, events: unknown[]): Promise<string[]> {
  const out: string[] = [];
  for (const [i, data] of events.entries()) {
    try {
      out.push(await applyContactEvent({ projection: p }, data, i + 1));
    } catch (err) {
      if (!(err instanceof MalformedEventError)) throw err;
      out.push('malformed');
    }
  }
  return out;
}

async function batched(p: ContactProjection, events: unknown[], cuts: number[]): Promise<string[]> {
  const out: string[] = [];
  let from = 0;
  for (const to of [...cuts, events.length]) {
    if (to <= from) continue;
    const outcomes = await applyContactEvents({ projection: p }, events.slice(from, to).map((data, k) => ({ data, seq: from + k + 1 })));
    out.push(...outcomes.map(label));
    from = to;
  }
  return out;
}

async function state(p: ContactProjection) {
  const sort = <T extends { _id: string }>(xs: T[]) => xs.sort((a, b) => a._id.localeCompare(b._id));
  return {
    contacts: sort(await p.contacts.find({})),
    tombstones: sort(await p.tombstones.find({})),
    catalogs: sort(await p.catalogs.find({})),
    pending: sort(await p.pendingOrders.find({})),
  };
}

async function expectSame(events: unknown[], cuts: number[], pending: Array<{ accountId: string; email: string; n: number }> = []) {
  const seq = await fresh();
  const bat = await fresh();
  await seedPending(seq, pending);
  await seedPending(bat, pending);
  const want = await oneByOne(seq, events);
  // the batch path itself must get it right (not its fallback for writers racing it)
  const fallback = jest.spyOn(bat as any, 'applySubscriberLocked');
  const have = await batched(bat, events, cuts);
  expect(fallback).not.toHaveBeenCalled();
  expect(have).toEqual(want);
  expect(await state(bat)).toEqual(await state(seq));
  return { outcomes: want, state: await state(bat) };
}

it('a batch with created, updated, deleted and re-created events out of order, duplicates and catalog events equals applying them one by one', async () => {
  const events = [
    subEvent('updated', 2, { id: 's1', tags: ['keep', 'gone'], topicIds: ['news'] }),
    subEvent('created', 1, { id: 's1', tags: ['v1'] }), // late older: stale
    subEvent('updated', 2, { id: 's1', tags: ['keep', 'gone'], topicIds: ['news'] }), // duplicate: stale
    subEvent('tag_added', 2, { id: 's1', tags: ['keep', 'gone'], topicIds: ['news'] }), // fact event of the same change
    subEvent('created', 1, { id: 's2', email: 'Bob@Example.org', fields: [{ fieldId: 'f1', value: { kind: 'TEXT', text: 'x' } }] }),
    { type: 'tag.deleted', accountId: A, tag: { id: 'gone' } },
    subEvent('updated', 3, { id: 's1', tags: ['gone', 'keep', 'new'] }), // after the deletion: 'gone' stripped
    subEvent('deleted', 3, { id: 's2', email: 'bob@example.org' }),
    subEvent('updated', 2, { id: 's2', email: 'bob@example.org' }), // late, below the tombstone: stale
    subEvent('created', 4, { id: 's2', email: 'bob@example.org', tags: ['back'] }), // re-created above the tombstone
    { type: 'topic.created', accountId: A, topic: { id: 'T' }, enrolledExistingSubscribers: true },
    subEvent('created', 1, { id: 's3' }), // after the enrollment: not enrolled
    subEvent('updated', 5, { id: 's1', optOuts: [{ topicId: 'T', at: '2025-06-01T00:00:00.000Z' }] }),
    { type: 'field.deleted', accountId: A, field: { id: 'f1' } },
    subEvent('updated', 2, { id: 's3', fields: [{ fieldId: 'f1', value: { kind: 'TEXT', text: 'y' } }] }),
    subEvent('updated', 6, { id: 's3' }, B), // another account claims s3: malformed
    { type: 'form.created', accountId: A }, // ignored
    { type: 'subscriber.updated', accountId: A, version: 'x' }, // malformed
    subEvent('deleted', 7, { id: 's1' }),
    subEvent('created', 1, { id: 's4', email: 'dan@example.org' }, B),
  ];
  const pending = [
    { accountId: A, email: 'bob@example.org', n: 1 },
    { accountId: A, email: 'bob@example.org', n: 2 },
    { accountId: B, email: 'dan@example.org', n: 3 },
    { accountId: A, email: 'dan@example.org', n: 4 }, // other account: stays
  ];
  const { outcomes, state: s } = await expectSame(events, [], pending);
  expect(outcomes).toEqual([
    'applied', 'stale', 'stale', 'stale', 'applied', 'applied', 'applied', 'applied', 'stale', 'applied', 'applied',
    'applied', 'applied', 'applied', 'applied', 'malformed', 'ignored', 'malformed', 'applied', 'applied',
  ]);
  expect(s.contacts.map((c) => c._id)).toEqual(['s2', 's3', 's4']);
  // s2's first incarnation took orders 1 and 2 with it when deleted; s4 (account B) got order 3
  expect(s.contacts.find((c) => c._id === 's2')!.orders).toEqual([]);
  expect(s.contacts.find((c) => c._id === 's4')!.orders.map((o) => o.orderId)).toEqual(['o3']);
  expect(s.pending.map((w) => w._id)).toEqual(['pending-4']);
  expect(s.tombstones.map((t) => [t._id, t.version])).toEqual([['s1', 7]]);
  // the same events cut into several batches, at every position
  for (let cut = 1; cut < events.length; cut++) await expectSame(events, [cut], pending);
});

it('only the last applied state of a subscriber is written, and orders attach to each email it had', async () => {
  const events = [
    subEvent('created', 1, { id: 's1', email: 'a@example.org' }),
    subEvent('updated', 2, { id: 's1', email: 'b@example.org' }),
    subEvent('updated', 3, { id: 's1', email: 'c@example.org', tags: ['t'] }),
    subEvent('created', 1, { id: 's2', email: 'a@example.org' }), // a@'s order went to s1 already
  ];
  const { state: s } = await expectSame(events, [], [
    { accountId: A, email: 'a@example.org', n: 1 },
    { accountId: A, email: 'b@example.org', n: 2 },
  ]);
  expect(s.contacts.find((c) => c._id === 's1')).toMatchObject({ email: 'c@example.org', tags: ['t'], version: 3, seq: 3 });
  expect(s.contacts.find((c) => c._id === 's1')!.orders.map((o) => o.orderId)).toEqual(['o1', 'o2']);
  expect(s.contacts.find((c) => c._id === 's2')!.orders).toEqual([]);
});

it('keeps facts of an existing contact and applies on top of state from earlier batches', async () => {
  const p = await fresh();
  await applyContactEvents({ projection: p }, [{ data: subEvent('created', 1, { id: 's1' }), seq: 1 }]);
  await p.contacts.updateOne({ _id: 's1' }, { $set: { lastDeliveredAt: new Date('2026-01-02T00:00:00.000Z'), orders: [{ ...order(9), orderedAt: new Date(order(9).orderedAt) }] } });
  await p.pendingOrders.insertOne({ _id: 'w', accountId: A, email: 's1@example.org', order: order(9) as any }); // already on the contact
  const out = await applyContactEvents({ projection: p }, [
    { data: subEvent('updated', 2, { id: 's1', firstName: null }), seq: 2 },
    { data: subEvent('updated', 3, { id: 's1', firstName: null, subscriberStatus: 'UNSUBSCRIBED' }), seq: 3 },
  ]);
  expect(out).toEqual(['applied', 'applied']);
  const c = await p.contacts.findOne({ _id: 's1' });
  expect(c).toMatchObject({ firstName: null, subscriberStatus: 'UNSUBSCRIBED', version: 3, seq: 3, lastDeliveredAt: new Date('2026-01-02T00:00:00.000Z') });
  expect(c!.orders.map((o) => o.orderId)).toEqual(['o9']); // not attached twice
  expect(await p.pendingOrders.countDocuments({})).toBe(0);
});

/** Deterministic pseudo-random numbers. */
function rng(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

it('random histories: batched equals one by one, for any cut into batches', async () => {
  for (let run = 0; run < 60; run++) {
    const r = rng(run + 1);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
    const ids = ['s1', 's2', 's3', 's4'];
    const emails = ['a@example.org', 'B@example.org', 'c@example.org'];
    const events: unknown[] = [];
    for (const id of ids) {
      let v = 0;
      const n = 1 + Math.floor(r() * 5);
      for (let k = 0; k < n; k++) {
        v++;
        const type = k === 0 ? 'created' : r() < 0.25 ? 'deleted' : r() < 0.3 ? 'created' : pick(['updated', 'tag_added', 'topics_changed']);
        const s: Sub = {
          id,
          email: pick(emails),
          tags: ['t1', 't2', 't3'].filter(() => r() < 0.5),
          topicIds: ['n1', 'n2', 'T1'].filter(() => r() < 0.4),
          optOuts: r() < 0.3 ? [{ topicId: pick(['n1', 'T1', 'T2']), at: '2025-06-01T00:00:00.000Z' }] : [],
          fields: r() < 0.6 ? [{ fieldId: pick(['f1', 'f2']), value: { kind: 'NUMBER', number: k } }] : [],
          firstName: r() < 0.3 ? null : `N${k}`,
        };
        const acc = id === 's4' && r() < 0.15 ? B : A;
        events.push(subEvent(type, v, s, acc));
        if (r() < 0.2) events.push(subEvent(type, v, s, acc)); // duplicate
      }
    }
    // shuffle partly: stream order is not version order
    for (let k = events.length - 1; k > 0; k--) {
      if (r() < 0.5) continue;
      const j = Math.floor(r() * (k + 1));
      [events[k], events[j]] = [events[j], events[k]];
    }
    const catalog = [
      { type: 'tag.deleted', accountId: A, tag: { id: 't1' } },
      { type: 'topic.deleted', accountId: A, topic: { id: 'n1' } },
      { type: 'field.deleted', accountId: A, field: { id: 'f1' } },
      { type: 'topic.created', accountId: A, topic: { id: 'T1' }, enrolledExistingSubscribers: true },
      { type: 'topic.created', accountId: A, topic: { id: 'T2' }, enrolledExistingSubscribers: true },
    ];
    for (const c of catalog) if (r() < 0.5) events.splice(Math.floor(r() * (events.length + 1)), 0, c);
    const cuts = [...new Set(Array.from({ length: Math.floor(r() * 4) }, () => Math.floor(r() * events.length)))].sort((a, b) => a - b);
    const pending = emails.flatMap((email, k) => (r() < 0.6 ? [{ accountId: pick([A, B]), email: email.toLowerCase(), n: run * 10 + k + 1 }] : []));
    await expectSame(events, cuts, pending);
  }
}, 60_000);
