/**
 * The contact projection against real processes: the subscriber service (a real process) writes and
 * publishes DOMAIN events through its outbox to a real nats-server; the projection (in-process here,
 * since the segment service has no read RPC yet) must reach exactly the subscriber service's state,
 * and a second fresh projection (new durable, empty store) must rebuild the same contacts from the
 * stream. Also: the real segment process starts its consumer and exits 0 on SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { startService } from '@mailer/testing';
import type { subscriberV1 } from '@mailer/proto';
import { ContactProjection, type ProjectedContact } from '../src/store/contacts';
import { startProjection } from '../src/events/projection';
import { add, addField, addTag, addTopic, data, type SubscriberStack, FT, fieldId, list, newAccount, num, S, startSubscriberStack, text } from '@mailer/testing/subscriber';

let env: SubscriberStack;
beforeAll(async () => {
  env = await startSubscriberStack();
}, 60_000);
afterAll(async () => env?.stop());
const c = () => env.client;

interface Running {
  store: Store;
  projection: ContactProjection;
  stop(): Promise<void>;
}
async function runProjection(durable: string): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'segment-proj-int-'));
  const store = await openStore({ dataDir: dir });
  const projection = new ContactProjection(store);
  const handle = startProjection({ nc: env.nc, projection, durable, concurrency: 8 });
  return {
    store,
    projection,
    async stop() {
      await handle.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const STATUS_PREFIX = 'SUBSCRIBER_STATUS_';
function statusName(s: subscriberV1.SubscriberStatus): string {
  const names: Record<number, string> = { 1: 'UNCONFIRMED', 2: 'ACTIVE', 3: 'UNSUBSCRIBED', 4: 'BOUNCED', 5: 'COMPLAINED', 6: 'BLOCKED' };
  return names[s] ?? `${STATUS_PREFIX}${s}`;
}
const folded = (t: string) => ({ text: t, folded: t.toLowerCase() });
function fieldValue(v: subscriberV1.FieldValue | undefined): unknown {
  const x = v?.value;
  switch (x?.$case) {
    case 'text':
    case 'email':
      return folded(x.value);
    case 'number':
      return { number: x.value };
    case 'date':
      return { date: x.value };
    case 'booleanValue':
      return { boolean: x.value };
    case 'optionId':
      return { optionId: x.value };
    case 'optionIds':
      return { optionIds: [...x.value.ids].sort() };
    default:
      return undefined;
  }
}

/** The account's subscribers as the subscriber service reports them, in the projection's terms. */
async function expected(accountId: string) {
  const items = (await list(c(), accountId)).items;
  const out = [];
  for (const o of items) {
    const d = await data(c(), accountId, o.id);
    const topics = (await c().getSubscriberTopics({ accountId, subscriberId: o.id })).topics;
    const fields: Record<string, unknown> = { EMAIL: folded(d.email) };
    if (d.firstName) fields.FIRST_NAME = folded(d.firstName);
    for (const f of d.fields) fields[f.fieldId] = fieldValue(f.value);
    out.push({
      id: o.id,
      email: d.email,
      firstName: d.firstName || null,
      subscriberStatus: statusName(d.subscriberStatus),
      registeredAt: new Date(o.registeredAt).toISOString(),
      tags: [...d.tags].sort(),
      topics: topics.filter((t) => t.subscribed).map((t) => t.topicId).sort(),
      optOuts: topics.filter((t) => t.optedOut).map((t) => ({ topicId: t.topicId, at: new Date(t.optedOutAt!).toISOString() })).sort((a, b) => a.topicId.localeCompare(b.topicId)),
      fields,
    });
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

function normalize(cs: ProjectedContact[]) {
  return cs
    .map((x) => ({
      id: x._id,
      email: x.email,
      firstName: x.firstName ?? null,
      subscriberStatus: x.subscriberStatus,
      registeredAt: x.registeredAt.toISOString(),
      tags: [...x.tags].sort(),
      topics: [...x.topics].sort(),
      optOuts: x.optOuts.map((o) => ({ topicId: o.topicId, at: o.at.toISOString() })).sort((a, b) => a.topicId.localeCompare(b.topicId)),
      fields: x.fields,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Polls until the projection holds exactly `want` for the account (bounded wait). */
async function converge(p: ContactProjection, accountId: string, want: unknown, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let have: unknown;
  while (Date.now() < deadline) {
    have = normalize(await p.contacts.find({ accountId }));
    if (JSON.stringify(have) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(have).toEqual(want);
}

it('projects the subscriber service state from DOMAIN, and a fresh projection rebuilds the same contacts', async () => {
  const a = newAccount();
  const other = newAccount();
  const first = await runProjection(`it-projection-${process.pid}-a`);
  try {
    const company = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT);
    const score = await addField(c(), a, 'Score', FT.FIELD_TYPE_NUMBER);
    const [vip, lead, old] = [await addTag(c(), a, 'VIP'), await addTag(c(), a, 'Lead'), await addTag(c(), a, 'Old')];
    const [news, deals] = [await addTopic(c(), a, 'News'), await addTopic(c(), a, 'Deals')];
    const s1 = await add(c(), a, 'ann@example.org', {
      firstName: 'Ann',
      tags: [vip.id],
      fields: [{ fieldId: fieldId(company), value: text('ACME') }, { fieldId: fieldId(score), value: num(5) }],
    });
    const s2 = await add(c(), a, 'bob@example.org', { tags: [old.id] });
    const s3 = await add(c(), a, 'cid@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED, tags: [old.id, lead.id] });
    const s4 = await add(c(), a, 'dan@example.org');
    await add(c(), other, 'ann@example.org', { firstName: 'Other account' });

    await c().addTagsToSubscribers({ accountId: a, subscriberIds: [s1.id, s2.id], tagIds: [lead.id] });
    await c().removeTagsFromSubscribers({ accountId: a, subscriberIds: [s1.id], tagIds: [vip.id] });
    await c().replaceSubscriberStatus({ accountId: a, subscriberId: s3.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
    await c().replaceSubscriberTopics({ accountId: a, subscriberId: s1.id, topicIds: [news.id, deals.id], overrideOptOuts: false });
    await c().optOutOfTopic({ accountId: a, subscriberId: s2.id, topicId: deals.id, source: 'footer' });
    await c().setFieldValue({ accountId: a, subscriberId: s2.id, fieldId: fieldId(company), value: text('Beta') });
    await c().replaceSubscriberStatus({ accountId: a, subscriberId: s4.id, subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
    await c().deleteSubscriber({ accountId: a, subscriberId: s4.id });
    await c().deleteTag({ accountId: a, tagId: old.id }); // account-wide: tag.deleted
    await addTopic(c(), a, 'Weekly', { enrollExistingSubscribers: true }); // account-wide: topic.created (enrolled)
    await add(c(), a, 'eve@example.org', { tags: [lead.id] }); // after the enrollment

    const want = await expected(a);
    expect(want.map((x) => x.email)).toEqual(expect.arrayContaining(['ann@example.org', 'bob@example.org', 'cid@example.org', 'eve@example.org']));
    expect(want).toHaveLength(4);
    expect(want.find((x) => x.id === s2.id)!.tags).toEqual([lead.id]); // 'old' removed by the tag deletion
    await converge(first.projection, a, want);
    await converge(first.projection, other, await expected(other));

    // Rebuild: a new durable on an empty store replays DOMAIN from the start.
    const second = await runProjection(`it-projection-${process.pid}-b`);
    try {
      await converge(second.projection, a, want);
      const strip = (cs: ProjectedContact[]) => cs.map(({ seq: _seq, ...rest }) => rest).sort((x, y) => x._id.localeCompare(y._id));
      expect(strip(await second.projection.contacts.find({ accountId: a }))).toEqual(strip(await first.projection.contacts.find({ accountId: a })));
      expect(await second.projection.tombstones.findOne({ _id: s4.id })).toMatchObject({ accountId: a });
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop();
  }
}, 90_000);

it('the segment process runs the projection consumer, catches up, and exits 0 on SIGTERM', async () => {
  const durable = `segment-it-${process.pid}`;
  const svc = await startService('segment', { NATS_URL: env.nats.url, SEGMENT_PROJECTION_DURABLE: durable });
  try {
    expect(svc.output()).toContain('contact projection started');
    const jsm = await env.nc.jetstreamManager();
    const deadline = Date.now() + 20_000;
    // The consumer is declared asynchronously after start: "not found" for a moment is expected.
    const consumerInfo = () => jsm.consumers.info('DOMAIN', durable).catch(() => undefined);
    let info = await consumerInfo();
    while ((!info || info.num_pending > 0 || info.num_ack_pending > 0 || info.delivered.stream_seq === 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      info = await consumerInfo();
    }
    if (!info) throw new Error(`the segment service never declared its consumer ${durable}`);
    expect(info.config.filter_subject).toBe('domain.>');
    expect(info.num_pending + info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBeGreaterThan(0);
  } finally {
    expect(await svc.stop()).toBe(0);
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
}, 60_000);
