// AudienceService.ListAudience on real processes: nats-server, the subscriber service and the segment
// service (ListAudience with a segment asks its ListSegmentAudience). Who is a recipient (ACTIVE, of
// the topic, never opted out), keyset paging that no status change can make skip anyone, the
// personalization fields, tenant isolation, and the segment path's re-check against this store.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '@mailer/kit';
import { audienceV1, segmentV1, subscriberV1 } from '@mailer/proto';
import { freePort, spawnReady, startNatsServer, startService, type NatsServerHandle, type RunningProcess, type RunningService } from '@mailer/testing';
import { add, addField, addTopic, errorOf, FT, fieldId, newAccount, S, text, type Client } from '@mailer/testing/subscriber';

let nats: NatsServerHandle;
let segment: RunningService;
let subscriber: RunningProcess;
let subscriberAddress: string;
let subscriberDir: string;
let client: Client;
let audience: ReturnType<typeof createClient<audienceV1.AudienceServiceClient>>;
let segments: ReturnType<typeof createClient<segmentV1.SegmentServiceClient>>;

/** The subscriber service on its fixed address and data directory, publishing to `natsUrl`. */
async function startSubscriber(natsUrl: string): Promise<void> {
  subscriber = await spawnReady('services/subscriber/dist/main.js', {
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    NATS_URL: natsUrl,
    DATA_DIR: subscriberDir,
    SUBSCRIBER_GRPC_ADDR: subscriberAddress,
    SEGMENT_GRPC_ADDR: segment.address,
    FIELD_USAGE_DEADLINE_MS: '1000',
  });
  client = createClient(subscriberV1.SubscriberServiceClient, subscriberAddress, 20_000);
  audience = createClient(audienceV1.AudienceServiceClient, subscriberAddress, 20_000);
}

async function stopSubscriber(): Promise<void> {
  client?.close();
  audience?.close();
  await subscriber?.stop();
}

beforeAll(async () => {
  nats = await startNatsServer();
  // The two services call each other: the subscriber service's address is chosen before either starts.
  subscriberAddress = `127.0.0.1:${await freePort()}`;
  subscriberDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-subscriber-'));
  segment = await startService('segment', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddress });
  segments = createClient(segmentV1.SegmentServiceClient, segment.address, 20_000);
  await startSubscriber(nats.url);
}, 60_000);

afterAll(async () => {
  segments?.close();
  await stopSubscriber();
  await segment?.stop();
  await nats?.stop();
});

const X = audienceV1.AudienceExclusion;
const list = (req: Partial<audienceV1.ListAudienceRequest>) => audience.listAudience(audienceV1.ListAudienceRequest.fromPartial(req));
const active = (accountId: string, emailAddress: string, topicIds: string[] = [], extra: Partial<subscriberV1.AddSubscriberRequest> = {}) =>
  add(client, accountId, emailAddress, { topicIds, topicIdsGiven: true, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE, ...extra }).then((s) => s.id);
const setStatus = (accountId: string, subscriberId: string, subscriberStatus: subscriberV1.SubscriberStatus) => client.replaceSubscriberStatus({ accountId, subscriberId, subscriberStatus });

/** Every page from the start: the ids in page order, and how many pages it took. */
async function walk(req: Partial<audienceV1.ListAudienceRequest>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after = '';
  for (let pages = 1; pages < 100; pages++) {
    const page = await list({ ...req, afterSubscriberId: after });
    ids.push(...page.recipients.map((r) => r.id));
    if (page.nextAfterSubscriberId === '') return { ids, pages };
    after = page.nextAfterSubscriberId;
  }
  throw new Error('the audience never ended');
}

describe('ListAudience without a segment (the subscriber store)', () => {
  const a = newAccount();
  const other = newAccount();
  let news: string;
  let company: subscriberV1.Field;
  let withCompany: string;
  let recipients: string[];
  let readers: string[];
  let optedOut: string;

  beforeAll(async () => {
    news = (await addTopic(client, a, 'News')).id;
    company = await addField(client, a, 'Company', FT.FIELD_TYPE_TEXT);
    withCompany = await active(a, 'ann@example.org', [news], { firstName: 'Ann', fields: [{ fieldId: fieldId(company), value: text('Acme') }] });
    const bob = await active(a, 'bob@example.org', [news]);
    const cid = await active(a, 'cid@example.org');
    optedOut = await active(a, 'dan@example.org', [news]);
    await client.optOutOfTopic({ accountId: a, subscriberId: optedOut, topicId: news, source: 'test' });
    const eve = await active(a, 'eve@example.org');
    await add(client, a, 'unconfirmed@example.org', { topicIds: [news], topicIdsGiven: true, subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED });
    await setStatus(a, await active(a, 'unsubscribed@example.org', [news]), S.SUBSCRIBER_STATUS_UNSUBSCRIBED);
    await setStatus(a, await active(a, 'blocked@example.org', [news]), S.SUBSCRIBER_STATUS_BLOCKED);
    await active(a, 'bounced@example.org', [news]);
    await client.setDeliveryStatus({ accountId: a, email: 'bounced@example.org', subscriberStatus: S.SUBSCRIBER_STATUS_BOUNCED });
    await active(other, 'ann@example.org', [], {});
    await active(other, 'zed@example.org');
    recipients = [withCompany, bob, cid, optedOut, eve].sort();
    readers = [withCompany, bob].sort();
  }, 60_000);

  it('returns the ACTIVE subscribers only, in id order (UNCONFIRMED, UNSUBSCRIBED, BOUNCED, BLOCKED left out)', async () => {
    const page = await list({ accountId: a, pageSize: 0 });
    expect(page.recipients.map((r) => r.id)).toEqual(recipients);
    expect(page.nextAfterSubscriberId).toBe('');
  });

  it('pages of 2 over 5 recipients: each exactly once, in id order, the cursor empty at the end', async () => {
    const { ids, pages } = await walk({ accountId: a, pageSize: 2 });
    expect(ids).toEqual(recipients);
    expect(pages).toBe(3);
  });

  it('with a topic: its subscribers only, never the reader who opted out of it (opting out removes the subscription)', async () => {
    const topics = await client.getSubscriberTopics({ accountId: a, subscriberId: optedOut });
    expect(topics.topics.find((t) => t.topicId === news)).toMatchObject({ subscribed: false, optedOut: true });
    expect((await walk({ accountId: a, topicId: news.toUpperCase(), pageSize: 1 })).ids).toEqual(readers);
  });

  it('carries email, first name and each custom field display value by its personalization tag', async () => {
    const page = await list({ accountId: a, pageSize: 1000 });
    const ann = page.recipients.find((r) => r.id === withCompany)!;
    expect(ann).toEqual({ id: withCompany, email: 'ann@example.org', firstName: 'Ann', fields: { [company.personalizationTagName]: 'Acme' }, exclusion: X.AUDIENCE_EXCLUSION_UNSPECIFIED });
    expect(page.recipients.find((r) => r.email === 'bob@example.org')).toMatchObject({ firstName: undefined, fields: {} });
  });

  it("never returns another account's subscribers, nor knows its topics", async () => {
    const mine = await walk({ accountId: other, pageSize: 1 });
    expect(mine.ids).toHaveLength(2);
    expect(mine.ids.some((id) => recipients.includes(id))).toBe(false);
    const e = await errorOf(list({ accountId: other, topicId: news, pageSize: 10 }));
    expect([e.code, e.errorId]).toEqual([5, 'topic_not_found']);
  });

  it('refuses an unknown topic and a page size over 1000', async () => {
    const unknown = await errorOf(list({ accountId: a, topicId: newAccount(), pageSize: 10 }));
    expect([unknown.code, unknown.errorId]).toEqual([5, 'topic_not_found']);
    const big = await errorOf(list({ accountId: a, pageSize: 5000 }));
    expect([big.code, big.errorId]).toEqual([3, 'validation_failed']);
  });
});

it('a status change of an earlier subscriber between pages skips no one (keyset, not offset)', async () => {
  const b = newAccount();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await active(b, `r${i}@example.org`));
  ids.sort();
  const first = await list({ accountId: b, pageSize: 2 });
  expect(first.recipients.map((r) => r.id)).toEqual(ids.slice(0, 2));
  await setStatus(b, ids[0], S.SUBSCRIBER_STATUS_UNSUBSCRIBED);
  const second = await list({ accountId: b, pageSize: 2, afterSubscriberId: first.nextAfterSubscriberId });
  expect(second.recipients.map((r) => r.id)).toEqual(ids.slice(2, 4));
  const third = await list({ accountId: b, pageSize: 2, afterSubscriberId: second.nextAfterSubscriberId });
  expect(third).toMatchObject({ recipients: [expect.objectContaining({ id: ids[4] })], nextAfterSubscriberId: '' });
});

describe('a broadcast audience: every reader with the rule that leaves it out (with_excluded, CheckAudience), and FindRecipients', () => {
  const a = newAccount();
  let news: string;
  let segmentId: string;
  const id: Record<string, string> = {};
  let expected: Record<string, audienceV1.AudienceExclusion>;

  beforeAll(async () => {
    const city = fieldId(await addField(client, a, 'City', FT.FIELD_TYPE_TEXT));
    news = (await addTopic(client, a, 'News')).id;
    const person = async (name: string, o: { city?: string; topic?: boolean; status?: subscriberV1.SubscriberStatus } = {}) => {
      const fields = o.city === undefined ? [] : [{ fieldId: city, value: text(o.city) }];
      id[name] = (await add(client, a, `${name}@example.org`, { firstName: name, fields, topicIds: o.topic === false ? [] : [news], topicIdsGiven: true, subscriberStatus: o.status ?? S.SUBSCRIBER_STATUS_ACTIVE })).id;
    };
    await person('ann', { city: 'Berlin' });
    await person('bob', { city: 'Paris' });
    await person('cid');
    await person('dan', { city: 'Berlin', topic: false });
    await person('eve', { city: 'Berlin', status: S.SUBSCRIBER_STATUS_UNCONFIRMED });
    await person('fay', { city: 'Berlin' });
    await client.optOutOfTopic({ accountId: a, subscriberId: id.fay, topicId: news, source: 'test' });
    await person('gus', { city: 'Berlin', status: S.SUBSCRIBER_STATUS_BLOCKED });
    const berlin: segmentV1.SegmentCondition = {
      subjectType: segmentV1.SegmentSubjectType.SEGMENT_SUBJECT_TYPE_FIELD,
      fieldRef: { type: segmentV1.SegmentFieldRefType.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: city },
      operator: segmentV1.SegmentOperator.SEGMENT_OPERATOR_TEXT_EQUALS,
      operand: { kind: segmentV1.SegmentOperandKind.SEGMENT_OPERAND_KIND_TEXT, text: 'Berlin', optionIds: [] },
    };
    segmentId = (await segments.createSegment({ accountId: a, name: 'Berlin', expression: { conditionGroups: [{ conditions: [berlin] }] } })).segment!.id;
    expected = {
      ann: X.AUDIENCE_EXCLUSION_UNSPECIFIED,
      bob: X.AUDIENCE_EXCLUSION_NOT_IN_SEGMENT,
      cid: X.AUDIENCE_EXCLUSION_SEGMENT_UNKNOWN,
      dan: X.AUDIENCE_EXCLUSION_NOT_IN_TOPIC,
      eve: X.AUDIENCE_EXCLUSION_NOT_ACTIVE,
      fay: X.AUDIENCE_EXCLUSION_OPTED_OUT,
      gus: X.AUDIENCE_EXCLUSION_NOT_ACTIVE,
    };
  }, 60_000);

  const byName = (readers: audienceV1.AudienceRecipient[]) => Object.fromEntries(readers.map((r) => [r.email.split('@')[0], r.exclusion]));

  it('walks every subscriber of the account once, in id order, each a recipient or with its first failing rule (status, topic, segment)', async () => {
    const seen: audienceV1.AudienceRecipient[] = [];
    let after = '';
    do {
      const page = await list({ accountId: a, segmentId, topicId: news, withExcluded: true, pageSize: 3, afterSubscriberId: after });
      seen.push(...page.recipients);
      after = page.nextAfterSubscriberId;
    } while (after);
    expect(seen.map((r) => r.id)).toEqual(Object.values(id).sort());
    expect(byName(seen)).toEqual(expected);
    // recipients carry their render values; excluded readers only who they are
    expect(seen.find((r) => r.id === id.ann)).toMatchObject({ firstName: 'ann', fields: { city: 'Berlin' } });
    expect(seen.find((r) => r.id === id.bob)).toEqual({ id: id.bob, email: 'bob@example.org', firstName: undefined, fields: {}, exclusion: X.AUDIENCE_EXCLUSION_NOT_IN_SEGMENT });
    // without topic and segment only the status counts
    const all = await list({ accountId: a, withExcluded: true, pageSize: 100 });
    expect(all.recipients.filter((r) => r.exclusion !== X.AUDIENCE_EXCLUSION_UNSPECIFIED).map((r) => r.id).sort()).toEqual([id.eve, id.gus].sort());
  });

  it('CheckAudience: the same rules for named readers now (a change since the page counts); unknown ids are left out', async () => {
    const ids = [id.gus, id.ann, '00000000-0000-4000-8000-000000000077', id.bob];
    const before = await audience.checkAudience({ accountId: a, segmentId, topicId: news, subscriberIds: ids });
    expect(before.readers.map((r) => r.id)).toEqual([id.gus, id.ann, id.bob].sort());
    expect(byName(before.readers)).toEqual({ ann: expected.ann, bob: expected.bob, gus: expected.gus });
    await setStatus(a, id.ann, S.SUBSCRIBER_STATUS_UNSUBSCRIBED);
    const after = await audience.checkAudience({ accountId: a, segmentId, topicId: news, subscriberIds: [id.ann] });
    expect(byName(after.readers)).toEqual({ ann: X.AUDIENCE_EXCLUSION_NOT_ACTIVE });
    await setStatus(a, id.ann, S.SUBSCRIBER_STATUS_ACTIVE);
    const other = await audience.checkAudience({ accountId: newAccount(), subscriberIds: [id.ann] });
    expect(other.readers).toEqual([]);
  });

  it('FindRecipients: the subscribers with these addresses, their status and render values; another account sees none', async () => {
    const { recipients } = await audience.findRecipients({ accountId: a, emails: ['ann@example.org', 'gus@example.org', 'nobody@example.org'] });
    expect(recipients.sort((x, y) => x.email.localeCompare(y.email))).toEqual([
      { id: id.ann, email: 'ann@example.org', firstName: 'ann', fields: { city: 'Berlin' }, status: S.SUBSCRIBER_STATUS_ACTIVE },
      { id: id.gus, email: 'gus@example.org', firstName: 'gus', fields: { city: 'Berlin' }, status: S.SUBSCRIBER_STATUS_BLOCKED },
    ]);
    expect((await audience.findRecipients({ accountId: newAccount(), emails: ['ann@example.org'] })).recipients).toEqual([]);
    const tooMany = await errorOf(audience.findRecipients({ accountId: a, emails: Array.from({ length: 1001 }, (_, i) => `r${i}@example.org`) }));
    expect([tooMany.code, tooMany.errorId]).toEqual([3, 'validation_failed']);
  });
});

describe('ListAudience with a segment (the segment service)', () => {
  const a = newAccount();
  let city: string;
  let news: string;
  let segmentId: string;
  const id: Record<string, string> = {};

  beforeAll(async () => {
    city = fieldId(await addField(client, a, 'City', FT.FIELD_TYPE_TEXT));
    news = (await addTopic(client, a, 'News')).id;
    const person = async (name: string, cityName: string | undefined, status = S.SUBSCRIBER_STATUS_ACTIVE) => {
      const fields = cityName === undefined ? [] : [{ fieldId: city, value: text(cityName) }];
      id[name] = (await add(client, a, `${name}@example.org`, { fields, topicIds: name === 'dan' ? [] : [news], topicIdsGiven: true, subscriberStatus: status })).id;
    };
    await person('ann', 'Berlin');
    await person('bob', 'Paris'); // FALSE
    await person('cid', undefined); // UNKNOWN
    await person('dan', 'Berlin'); // not in the topic
    await person('eve', 'Rome', S.SUBSCRIBER_STATUS_UNCONFIRMED);
    await person('fay', 'Munich');
    const cityIsNotParis: segmentV1.SegmentCondition = {
      subjectType: segmentV1.SegmentSubjectType.SEGMENT_SUBJECT_TYPE_FIELD,
      fieldRef: { type: segmentV1.SegmentFieldRefType.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: city },
      operator: segmentV1.SegmentOperator.SEGMENT_OPERATOR_TEXT_NOT_EQUALS,
      operand: { kind: segmentV1.SegmentOperandKind.SEGMENT_OPERAND_KIND_TEXT, text: 'Paris', optionIds: [] },
    };
    segmentId = (await segments.createSegment({ accountId: a, name: 'Not Paris', expression: { conditionGroups: [{ conditions: [cityIsNotParis] }] } })).segment!.id;
  }, 60_000);

  const ofSegment = (...names: string[]) => names.map((n) => id[n]).sort();

  it('returns the ACTIVE TRUE members only, in id order, page by page', async () => {
    expect((await walk({ accountId: a, segmentId, pageSize: 1 })).ids).toEqual(ofSegment('ann', 'dan', 'fay'));
    expect((await walk({ accountId: a, segmentId, topicId: news, pageSize: 2 })).ids).toEqual(ofSegment('ann', 'fay'));
  });

  it('an unknown segment is segment_not_found', async () => {
    const e = await errorOf(list({ accountId: a, segmentId: newAccount(), pageSize: 10 }));
    expect([e.code, e.errorId]).toEqual([5, 'segment_not_found']);
  });

  it("re-checks the members against this service's store: a status change the projection has not seen drops the member", async () => {
    // The subscriber service moves to a second nats-server: its writes from now on never reach the
    // segment projection, which keeps every member as it was (a projection lagging for good).
    const elsewhere = await startNatsServer();
    try {
      await stopSubscriber();
      await startSubscriber(elsewhere.url);
      await setStatus(a, id.fay, S.SUBSCRIBER_STATUS_UNSUBSCRIBED);
      const stale = await segments.listSegmentAudience({ accountId: a, segmentId, afterSubscriberId: '', pageSize: 10 });
      expect(stale.subscriberIds).toEqual(ofSegment('ann', 'dan', 'fay'));
      const page = await list({ accountId: a, segmentId, pageSize: 10 });
      expect(page.recipients.map((r) => r.id)).toEqual(ofSegment('ann', 'dan'));
      // the cursor still follows the segment's page: fay was scanned, even though left out
      const [first, second] = ofSegment('ann', 'dan', 'fay');
      const byTwo = await list({ accountId: a, segmentId, pageSize: 2 });
      expect(byTwo.nextAfterSubscriberId).toBe(second);
      expect(byTwo.recipients.map((r) => r.id)).toEqual([first, second].filter((x) => x !== id.fay));
    } finally {
      await stopSubscriber();
      await startSubscriber(nats.url);
      await elsewhere.stop();
    }
  }, 60_000);

  it('the segment service down is UNAVAILABLE segment_service_unavailable', async () => {
    segments.close();
    await segment.stop();
    const e = await errorOf(list({ accountId: a, segmentId, pageSize: 10 }));
    expect([e.code, e.errorId]).toEqual([14, 'segment_service_unavailable']);
    // the store path does not need it
    expect((await list({ accountId: a, pageSize: 10 })).recipients).toHaveLength(4);
  });
});
