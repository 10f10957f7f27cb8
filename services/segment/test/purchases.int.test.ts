/**
 * Purchase sources, order ingest and PURCHASES segments against real processes (nats-server, the
 * subscriber service, the segment service), like segments.int.test.ts.
 */
import { segmentV1 } from '@mailer/proto';
import { BIF, FR, OK, OP, operand, PK, SK, ST, useSegmentStack } from './support/stack';
import { add, errorOf, newAccount } from '@mailer/testing/subscriber';

const stack = useSegmentStack();
const c = () => stack.env.client;

type Period = segmentV1.PurchasePeriod;
const purchased = (sourceId: string | undefined, period: Period): segmentV1.SegmentExpression => ({
  conditionGroups: [
    {
      conditions: [
        {
          subjectType: ST.SEGMENT_SUBJECT_TYPE_PURCHASES,
          operator: OP.SEGMENT_OPERATOR_PURCHASED,
          operand: { kind: OK.SEGMENT_OPERAND_KIND_PURCHASE, optionIds: [], purchase: { sourceId, scopeKind: SK.PURCHASE_SCOPE_KIND_ALL_PRODUCTS, products: [], period } },
        },
      ],
    },
  ],
});
const range = (from: string, to: string): Period => ({ kind: PK.PURCHASE_PERIOD_KIND_DATE_RANGE, from, to });
const order = (orderId: string, email: string, orderedAt: string, extra: Partial<segmentV1.PurchaseOrder> = {}): segmentV1.PurchaseOrder => ({
  orderId,
  email,
  orderedAt,
  currency: 'EUR',
  amount: 10,
  items: [{ productId: 'p1' }],
  ...extra,
});
const preview = (accountId: string, expression: segmentV1.SegmentExpression) => stack.client.previewExpression({ accountId, expression }).then((r) => r.preview!);

/** Polls until the preview of `expression` has the wanted matching/unknown counts. */
async function previewEventually(accountId: string, expression: segmentV1.SegmentExpression, matching: number, unknown: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let p = await preview(accountId, expression);
  while (Date.now() < deadline && (p.matchingCount !== String(matching) || p.unknownCount !== String(unknown))) {
    await new Promise((r) => setTimeout(r, 100));
    p = await preview(accountId, expression);
  }
  expect([p.matchingCount, p.unknownCount]).toEqual([String(matching), String(unknown)]);
  return p;
}

/** The local date in a zone, "YYYY-MM-DD". */
const localToday = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const minusDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);

describe('purchase sources', () => {
  const a = newAccount();
  let src: segmentV1.PurchaseSource;

  it('creates a source capturing live with an open baseline, lists it', async () => {
    const before = Date.now();
    src = (await stack.client.createPurchaseSource({ accountId: a, name: ' Tokyo shop ', timeZone: 'Asia/Tokyo' })).source!;
    expect(src).toMatchObject({ name: 'Tokyo shop', timeZone: 'Asia/Tokyo', baselineOpen: true });
    expect(src.capturedOrdersToUtc).toBeUndefined();
    expect(src.capturedOrdersFromUtc).toBe(src.attributionStartedAtUtc);
    expect(Date.parse(src.attributionStartedAtUtc)).toBeGreaterThanOrEqual(before - 1000);
    expect((await stack.client.listPurchaseSources({ accountId: a })).items).toEqual([src]);
    expect((await stack.client.listPurchaseSources({ accountId: newAccount() })).items).toEqual([]);
  });

  it('refuses a taken name and a non-IANA zone', async () => {
    const taken = await errorOf(stack.client.createPurchaseSource({ accountId: a, name: 'Tokyo shop', timeZone: 'UTC' }));
    expect([taken.code, taken.errorId]).toEqual([6, 'purchase_source_name_taken']);
    const zone = await errorOf(stack.client.createPurchaseSource({ accountId: a, name: 'Other', timeZone: 'Mars/Olympus' }));
    expect([zone.code, zone.errorId]).toEqual([3, 'purchase_source_invalid_time_zone']);
    expect(zone.details?.[0].path).toBe('timeZone');
  });

  it('sets the baseline: moves capturedOrdersFromUtc back, closes it when complete', async () => {
    const other = (await stack.client.createPurchaseSource({ accountId: a, name: 'Baseline shop', timeZone: 'Europe/Berlin' })).source!;
    const open = (await stack.client.setPurchaseBaseline({ accountId: a, sourceId: other.id, capturedOrdersFromUtc: '2021-01-01T00:00:00Z', complete: false })).source!;
    expect(open).toMatchObject({ capturedOrdersFromUtc: '2021-01-01T00:00:00.000Z', baselineOpen: true, attributionStartedAtUtc: other.attributionStartedAtUtc });
    const done = (await stack.client.setPurchaseBaseline({ accountId: a, sourceId: other.id, capturedOrdersFromUtc: '2020-01-01T00:00:00Z', complete: true })).source!;
    expect(done).toMatchObject({ capturedOrdersFromUtc: '2020-01-01T00:00:00.000Z', baselineOpen: false });
    expect((await stack.client.listPurchaseSources({ accountId: a })).items.find((s) => s.id === other.id)).toEqual(done);
    const late = await errorOf(stack.client.setPurchaseBaseline({ accountId: a, sourceId: other.id, capturedOrdersFromUtc: '2999-01-01T00:00:00Z', complete: true }));
    expect([late.code, late.errorId, late.details?.[0].path]).toEqual([3, 'validation_failed', 'capturedOrdersFromUtc']);
    const bad = await errorOf(stack.client.setPurchaseBaseline({ accountId: a, sourceId: other.id, capturedOrdersFromUtc: 'yesterday', complete: true }));
    expect(bad.errorId).toBe('validation_failed');
  });

  it('refuses unknown sources and another account’s source (purchase_source_not_found)', async () => {
    for (const p of [
      stack.client.ingestOrders({ accountId: a, sourceId: 'nope', orders: [] }),
      stack.client.setPurchaseBaseline({ accountId: a, sourceId: 'nope', capturedOrdersFromUtc: '2020-01-01T00:00:00Z', complete: true }),
      stack.client.ingestOrders({ accountId: newAccount(), sourceId: src.id, orders: [] }),
    ]) {
      const e = await errorOf(p);
      expect([e.code, e.errorId]).toEqual([5, 'purchase_source_not_found']);
    }
  });

  it('validates orders with precise details, refuses more than 1,000', async () => {
    const e = await errorOf(
      stack.client.ingestOrders({
        accountId: a,
        sourceId: src.id,
        orders: [
          order('ok', 'x@example.org', '2024-01-01T00:00:00Z'),
          order('b1', 'x@example.org', '2024-01-01T00:00:00Z', { currency: 'EURO' }),
          order('b2', 'x@example.org', '2024-01-01T00:00:00Z', { amount: -1 }),
          order('b3', 'x@example.org', 'last tuesday'),
          order('b4', 'not-an-email', '2024-01-01T00:00:00Z'),
        ],
      }),
    );
    expect([e.code, e.errorId]).toEqual([3, 'validation_failed']);
    expect(e.details?.map((d) => d.path)).toEqual(['orders[1].currency', 'orders[2].amount', 'orders[3].orderedAt', 'orders[4].email']);
    const many = Array.from({ length: 1001 }, (_, i) => order(`o${i}`, 'x@example.org', '2024-01-01T00:00:00Z'));
    const tooMany = await errorOf(stack.client.ingestOrders({ accountId: a, sourceId: src.id, orders: many }));
    expect([tooMany.errorId, tooMany.details?.[0].path]).toEqual(['validation_failed', 'orders']);
    // nothing of a refused batch was stored
    expect(await stack.client.ingestOrders({ accountId: a, sourceId: src.id, orders: [order('ok', 'x@example.org', '2024-01-01T00:00:00Z')] })).toEqual({ accepted: 1, duplicates: 0 });
  });

  it('refuses a PURCHASES condition on an unknown source', async () => {
    const e = await errorOf(preview(a, purchased('nope', range('2024-01-01', '2024-01-31'))));
    expect(e.errorId).toBe('segment_purchase_source_not_found');
  });
});

describe('PURCHASES segments over ingested orders', () => {
  const a = newAccount();
  const tokyoToday = localToday('Asia/Tokyo');
  const tMinus = (n: number) => minusDays(tokyoToday, n);
  let src: segmentV1.PurchaseSource;
  const march10 = purchased(undefined, range('2024-03-10', '2024-03-10'));
  const march9 = purchased(undefined, range('2024-03-09', '2024-03-09'));
  const last2 = purchased(undefined, { kind: PK.PURCHASE_PERIOD_KIND_LAST_DAYS, days: 2 });

  beforeAll(async () => {
    src = (await stack.client.createPurchaseSource({ accountId: a, name: 'Tokyo', timeZone: 'Asia/Tokyo' })).source!;
    await add(c(), a, 'ann@example.org');
    await add(c(), a, 'bob@example.org');
    await previewEventually(a, { conditionGroups: [{ conditions: [{ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: BIF.BUILT_IN_FIELD_EMAIL }, operator: OP.SEGMENT_OPERATOR_TEXT_CONTAINS, operand: { kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: '@', optionIds: [] } }] }] }, 2, 0);
  }, 60_000);

  it('ingests idempotently per orderId (again, and twice in one batch)', async () => {
    const first = await stack.client.ingestOrders({
      accountId: a,
      sourceId: src.id,
      orders: [
        // 23:30 UTC on March 9 is 08:30 on March 10 in Tokyo
        order('A-1', ' Ann@Example.org ', '2024-03-09T23:30:00Z'),
        // 08:30 Tokyo yesterday: inside LAST_DAYS 2 read in Tokyo
        order('A-2', 'ann@example.org', `${tMinus(2)}T23:30:00Z`),
        // 23:59 Tokyo three days ago: outside LAST_DAYS 2
        order('B-1', 'bob@example.org', `${tMinus(3)}T14:59:00Z`),
        // no contact yet: kept pending, attached when zed appears
        order('Z-1', 'zed@example.org', '2024-03-09T23:45:00Z'),
      ],
    });
    expect(first).toEqual({ accepted: 4, duplicates: 0 });
    expect(await stack.client.ingestOrders({ accountId: a, sourceId: src.id, orders: [order('A-1', 'ann@example.org', '2024-03-09T23:30:00Z')] })).toEqual({ accepted: 0, duplicates: 1 });
    expect(
      await stack.client.ingestOrders({ accountId: a, sourceId: src.id, orders: [order('C-1', 'cid@example.org', '2024-01-01T00:00:00Z'), order('C-1', 'cid@example.org', '2024-01-01T00:00:00Z')] }),
    ).toEqual({ accepted: 1, duplicates: 1 });
  });

  it('while the baseline is open, absence of orders is UNKNOWN; capture scopes list the source', async () => {
    const p = await previewEventually(a, march10, 1, 1); // ann TRUE, bob UNKNOWN
    expect(p.contacts.map((x) => x.email)).toEqual(['ann@example.org']);
    expect(p.captureScopes).toEqual([
      { sourceId: src.id, name: 'Tokyo', timeZone: 'Asia/Tokyo', capturedOrdersFromUtc: src.capturedOrdersFromUtc, baselineOpen: true, attributionStartedAtUtc: src.attributionStartedAtUtc },
    ]);
    const saved = (await stack.client.createSegment({ accountId: a, name: 'Bought March 10', expression: march10 })).segment!;
    expect((await stack.client.countSegment({ accountId: a, segmentId: saved.id })).count!.subscriberCount).toBe('1');
    expect((await stack.client.previewSegment({ accountId: a, segmentId: saved.id })).preview!.captureScopes.map((s) => s.sourceId)).toEqual([src.id]);
  });

  it('attaches a pending order when its contact appears', async () => {
    await add(c(), a, 'zed@example.org');
    await previewEventually(a, march10, 2, 1); // ann, zed TRUE; bob UNKNOWN
  });

  it('once the baseline is complete, absence is FALSE; periods are read in the source zone', async () => {
    await stack.client.setPurchaseBaseline({ accountId: a, sourceId: src.id, capturedOrdersFromUtc: '2020-01-01T00:00:00Z', complete: true });
    const p = await previewEventually(a, march10, 2, 0);
    expect(p.contacts.map((x) => x.email)).toEqual(['ann@example.org', 'zed@example.org']);
    expect(p.captureScopes[0]).toMatchObject({ baselineOpen: false, capturedOrdersFromUtc: '2020-01-01T00:00:00.000Z' });
    // The orders at 23:30 / 23:45 UTC on March 9 are March 10 in Tokyo: none on March 9.
    await previewEventually(a, march9, 0, 0);
    // LAST_DAYS 2 in Tokyo: ann's order 08:30 Tokyo yesterday counts, bob's 23:59 Tokyo three days ago not.
    const l = await previewEventually(a, last2, 1, 0);
    expect(l.contacts.map((x) => x.email)).toEqual(['ann@example.org']);
    // Same through the named source.
    await previewEventually(a, purchased(src.id, range('2024-03-10', '2024-03-10')), 2, 0);
  });

  it('a saved segment counts the same (count reads the real sources)', async () => {
    const saved = (await stack.client.createSegment({ accountId: a, name: 'Bought last 2 days', expression: last2 })).segment!;
    expect((await stack.client.countSegment({ accountId: a, segmentId: saved.id })).count!.subscriberCount).toBe('1');
  });
});
