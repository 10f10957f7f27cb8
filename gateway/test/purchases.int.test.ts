import { schemaErrors } from '../src/openapi/validator';
import { expectError } from './support/harness';
import { expectStatus, INSTANT_PATTERN, startSubscriberStack, UNKNOWN_ID, UUID_PATTERN, type Api, type SubscriberStack } from './support/subscriber-stack';

// Purchase sources through HTTP: real gateway -> real segment service (orders, baseline, and the
// capture scopes a PURCHASES segment's preview reports).

let env: SubscriberStack;
beforeAll(async () => {
  env = await startSubscriberStack({ peers: ['segment'] });
}, 90_000);
afterAll(() => env?.stop());

const id = expect.stringMatching(UUID_PATTERN);
const instant = expect.stringMatching(INSTANT_PATTERN);

const order = (orderId: string, email: string, extra: Record<string, unknown> = {}) => ({
  orderId,
  email,
  orderedAt: new Date().toISOString(),
  currency: 'EUR',
  amount: 12.5,
  items: [{ productId: 'p-1' }],
  ...extra,
});

async function createSource(a: Api, name: string, timeZone = 'Europe/Berlin') {
  const res = await a.post('/purchase-sources', { name, timeZone });
  const source = expectStatus(res, 201);
  expect(res.headers.get('location')).toBe(`/purchase-sources/${source.id}`);
  expect(schemaErrors('PurchaseSource', source)).toEqual([]);
  return source;
}

describe('purchase sources', () => {
  it('create and list; invalid time zone 400; duplicate name 409', async () => {
    const a = await env.account('purchase sources');
    expect(expectStatus(await a.get('/purchase-sources'), 200)).toEqual({ items: [] });
    const shop = await createSource(a, 'Shop');
    expect(shop).toEqual({
      id,
      name: 'Shop',
      timeZone: 'Europe/Berlin',
      capturedOrdersFromUtc: instant,
      capturedOrdersToUtc: null,
      baselineOpen: true,
      attributionStartedAtUtc: instant,
    });
    const outlet = await createSource(a, 'Outlet', 'America/New_York');
    const list = expectStatus(await a.get('/purchase-sources'), 200);
    expect(schemaErrors('PurchaseSourceList', list)).toEqual([]);
    expect(list).toEqual({ items: [shop, outlet] });

    expectError(await a.post('/purchase-sources', { name: 'Zoned', timeZone: 'Mars/Olympus' }), 400, 'purchase_source_invalid_time_zone');
    expectError(await a.post('/purchase-sources', { name: 'Shop', timeZone: 'UTC' }), 409, 'purchase_source_name_taken');
    expectError(await a.post('/purchase-sources', { name: '', timeZone: 'UTC' }), 400, 'validation_failed');
    expectError(await a.post('/purchase-sources', { name: 'x' }), 400, 'validation_failed');
    expect(expectStatus(await a.get('/purchase-sources'), 200).items).toHaveLength(2);
  }, 30_000);

  it('ingests orders (idempotent per orderId); baseline closes; a PURCHASED preview reports the capture scope', async () => {
    const a = await env.account('purchase orders');
    const buyer = expectStatus(await a.post('/subscribers', { email: 'buyer@example.org', firstName: 'Buyer' }), 201);
    expectStatus(await a.post('/subscribers', { email: 'window@example.org' }), 201);
    const shop = await createSource(a, 'Shop');

    const orders = [order('o-1', 'buyer@example.org'), order('o-2', 'Buyer@Example.org', { couponCode: 'SPRING', items: [{ productId: 'p-2', variantId: 'v-1', groupId: null }] })];
    const first = expectStatus(await a.post(`/purchase-sources/${shop.id}/orders`, { orders }), 200);
    expect(schemaErrors('IngestOrdersResult', first)).toEqual([]);
    expect(first).toEqual({ accepted: 2, duplicates: 0 });
    expect(expectStatus(await a.post(`/purchase-sources/${shop.id}/orders`, { orders: [...orders, order('o-3', 'someone@example.org')] }), 200)).toEqual({ accepted: 1, duplicates: 2 });

    const from = new Date(Date.parse(shop.attributionStartedAtUtc) - 30 * 86_400_000).toISOString();
    const closed = expectStatus(await a.post(`/purchase-sources/${shop.id.toUpperCase()}/baseline`, { capturedOrdersFromUtc: from, complete: true }), 200);
    expect(schemaErrors('PurchaseSource', closed)).toEqual([]);
    expect(closed).toEqual({ ...shop, capturedOrdersFromUtc: from, baselineOpen: false });
    expect(expectStatus(await a.get('/purchase-sources'), 200)).toEqual({ items: [closed] });
    // a baseline can only extend the window back
    const later = new Date(Date.parse(shop.attributionStartedAtUtc) + 86_400_000).toISOString();
    expectError(await a.post(`/purchase-sources/${shop.id}/baseline`, { capturedOrdersFromUtc: later, complete: true }), 400, 'validation_failed');

    const expression = {
      conditionGroups: [{ conditions: [{ subjectType: 'PURCHASES', fieldRef: null, operator: 'PURCHASED', operand: { kind: 'PURCHASE', purchase: { sourceId: shop.id, scopeKind: 'ALL_PRODUCTS' } } }] }],
    };
    const until = Date.now() + 15_000;
    let preview = expectStatus(await a.post('/segments/preview', { expression }), 200);
    while (preview.matchingCount !== 1 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      preview = expectStatus(await a.post('/segments/preview', { expression }), 200);
    }
    expect(schemaErrors('SegmentPreview', preview)).toEqual([]);
    expect(preview.matchingCount).toBe(1);
    expect(preview.contacts.map((c: { id: string }) => c.id)).toEqual([buyer.id]);
    expect(preview.captureScopes).toEqual([
      {
        sourceId: shop.id,
        sourceName: 'Shop',
        timeZone: 'Europe/Berlin',
        capturedOrdersFromUtc: from,
        capturedOrdersToUtc: null,
        baselineOpen: false,
        attributionStartedAtUtc: shop.attributionStartedAtUtc,
      },
    ]);
  }, 60_000);

  it('order validation: schema limits at the gateway, unknown members refused', async () => {
    const a = await env.account('purchase validation');
    const shop = await createSource(a, 'Shop');
    const ingest = (body: unknown) => a.post(`/purchase-sources/${shop.id}/orders`, body);

    expectError(await ingest({ orders: [] }), 400, 'validation_failed');
    expectError(await ingest({ orders: Array.from({ length: 1001 }, (_, i) => order(`o-${i}`, 'x@example.org')) }), 400, 'validation_failed');
    expectError(await ingest({ orders: [order('o', 'x@example.org', { currency: 'EURO' })] }), 400, 'validation_failed');
    expectError(await ingest({ orders: [order('o', 'x@example.org', { amount: -1 })] }), 400, 'validation_failed');
    expectError(await ingest({ orders: [order('o', 'x@example.org', { orderedAt: 'yesterday' })] }), 400, 'validation_failed');
    expectError(await ingest({ orders: [order('o', 'x@example.org', { items: [] })] }), 400, 'validation_failed');
    // answered by the segment service, pathed per order
    const bad = await ingest({ orders: [order('o', 'not-an-email')] });
    expectError(bad, 400, 'validation_failed');
    expect(bad.json.details).toContainEqual({ path: 'orders[0].email', problem: expect.any(String) });

    const unknown = await ingest({ orders: [order('o', 'x@example.org', { discount: 3 })] });
    expectError(unknown, 400, 'unknown_property');
    expect(unknown.json.details).toContainEqual({ path: 'body.orders[0].discount', problem: 'is not a known property' });
    expectError(await a.post('/purchase-sources', { name: 'x', timeZone: 'UTC', url: 'https://shop' }), 400, 'unknown_property');
    expectError(await a.post(`/purchase-sources/${shop.id}/baseline`, { capturedOrdersFromUtc: shop.attributionStartedAtUtc, complete: true, force: true }), 400, 'unknown_property');
    expect(expectStatus(await a.get('/purchase-sources'), 200)).toEqual({ items: [shop] });
  }, 30_000);

  it('another account\'s source is unknown (404); malformed ids answer 400 invalid_uuid', async () => {
    const owner = await env.account('purchase owner');
    const other = await env.account('purchase other');
    const shop = await createSource(owner, 'Mine');
    const baseline = { capturedOrdersFromUtc: shop.attributionStartedAtUtc, complete: true };

    expectError(await other.post(`/purchase-sources/${shop.id}/orders`, { orders: [order('o-1', 'x@example.org')] }), 404, 'purchase_source_not_found');
    expectError(await other.post(`/purchase-sources/${shop.id}/baseline`, baseline), 404, 'purchase_source_not_found');
    expectError(await owner.post(`/purchase-sources/${UNKNOWN_ID}/orders`, { orders: [order('o-1', 'x@example.org')] }), 404, 'purchase_source_not_found');
    expect(expectStatus(await other.get('/purchase-sources'), 200)).toEqual({ items: [] });
    expect(expectStatus(await owner.get('/purchase-sources'), 200)).toEqual({ items: [shop] });

    expectError(await owner.post('/purchase-sources/not-a-uuid/orders', { orders: [order('o-1', 'x@example.org')] }), 400, 'invalid_uuid');
    expectError(await owner.post('/purchase-sources/not-a-uuid/baseline', baseline), 400, 'invalid_uuid');
  }, 30_000);
});
