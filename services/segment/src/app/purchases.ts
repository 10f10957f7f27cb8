// Use cases of SegmentService's purchase part: purchase sources, order ingest and the capture baseline,
// one function per RPC (createPurchaseSource, listPurchaseSources, setPurchaseBaseline, ingestOrders).
import { invalid, isIanaTimeZone, notFound, type Problem } from '@mailer/kit';
import { toContactOrder } from '../domain/contact';
import { canonicalEmail, purchaseSourcesOf, type PurchaseSourceDoc } from '../store/purchase-sources';
import { newIdOf, nowOf, type PurchaseDeps } from './deps';

/** An order as IngestOrders carries it (checked here). */
export interface OrderInput {
  orderId: string;
  email: string;
  orderedAt: string;
  currency: string;
  amount: number;
  couponCode?: string | null;
  items?: Array<{ productId: string; variantId?: string | null; groupId?: string | null }>;
}

export const MAX_ORDERS_PER_CALL = 1000;
const NAME_MAX = 200;
const ID_MAX = 200;
const CURRENCY = /^[A-Za-z]{3}$/;
/** An ISO 8601 instant with an explicit offset (Z or ±hh:mm), so no instant depends on the server's zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const sourceNotFound = (id: string) => notFound('purchase_source_not_found', `purchase source ${id} does not exist`);
const fail = (message: string, details: Problem[]) => invalid('validation_failed', message, details);

function instantOf(raw: string | undefined): Date | null {
  if (typeof raw !== 'string' || !INSTANT.test(raw)) return null;
  const d = new Date(raw);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Checks one order; problems are pathed `orders[i].member`. */
function orderProblems(o: OrderInput, i: number): Problem[] {
  const p: Problem[] = [];
  const at = (member: string, problem: string) => p.push({ path: `orders[${i}].${member}`, problem });
  if (typeof o.orderId !== 'string' || o.orderId.trim() === '' || o.orderId.length > ID_MAX) at('orderId', `must be 1 to ${ID_MAX} characters`);
  const email = typeof o.email === 'string' ? canonicalEmail(o.email) : '';
  if (email === '' || email.length > 320 || !/^[^\s@]+@[^\s@]+$/.test(email)) at('email', 'must be an email address');
  if (!instantOf(o.orderedAt)) at('orderedAt', 'must be an ISO 8601 instant with offset, e.g. 2024-05-01T10:00:00Z');
  if (typeof o.currency !== 'string' || !CURRENCY.test(o.currency)) at('currency', 'must be an ISO 4217 code (three letters)');
  if (typeof o.amount !== 'number' || !Number.isFinite(o.amount) || o.amount < 0) at('amount', 'must be a finite number >= 0');
  if (o.couponCode != null && (typeof o.couponCode !== 'string' || o.couponCode.length > ID_MAX)) at('couponCode', `must be at most ${ID_MAX} characters`);
  (o.items ?? []).forEach((it, j) => {
    if (typeof it.productId !== 'string' || it.productId.trim() === '' || it.productId.length > ID_MAX) at(`items[${j}].productId`, 'required');
    if (it.variantId != null && (it.variantId === '' || it.variantId.length > ID_MAX)) at(`items[${j}].variantId`, 'must be a non-empty id or absent');
    if (it.groupId != null && (it.groupId === '' || it.groupId.length > ID_MAX)) at(`items[${j}].groupId`, 'must be a non-empty id or absent');
  });
  return p;
}

async function loadSource(deps: PurchaseDeps, accountId: string, id: string): Promise<PurchaseSourceDoc> {
  if (typeof id !== 'string' || id === '' || id.length > 100) throw sourceNotFound(String(id ?? ''));
  const doc = await purchaseSourcesOf(deps.purchases, accountId).get(id);
  if (!doc) throw sourceNotFound(id);
  return doc;
}

export async function createPurchaseSource(deps: PurchaseDeps, accountId: string, input: { name: string; timeZone: string }): Promise<PurchaseSourceDoc> {
  const name = (input.name ?? '').trim();
  if (name === '' || name.length > NAME_MAX) throw fail(`name must be 1 to ${NAME_MAX} characters`, [{ path: 'name', problem: `must be 1 to ${NAME_MAX} characters, not blank` }]);
  const zone = (input.timeZone ?? '').trim();
  if (!isIanaTimeZone(zone)) throw invalid('purchase_source_invalid_time_zone', `"${zone}" is not an IANA time zone`, [{ path: 'timeZone', problem: 'must be an IANA time zone id, e.g. Europe/Berlin' }]);
  const at = nowOf(deps);
  return purchaseSourcesOf(deps.purchases, accountId).insert({
    _id: newIdOf(deps),
    name,
    timeZone: zone,
    capturedOrdersFromUtc: at,
    capturedOrdersToUtc: null,
    baselineOpen: true,
    attributionStartedAtUtc: at,
    createdAt: at,
  });
}

export const listPurchaseSources = (deps: PurchaseDeps, accountId: string): Promise<PurchaseSourceDoc[]> => purchaseSourcesOf(deps.purchases, accountId).list();

export async function setPurchaseBaseline(deps: PurchaseDeps, accountId: string, input: { sourceId: string; capturedOrdersFromUtc: string; complete: boolean }): Promise<PurchaseSourceDoc> {
  const current = await loadSource(deps, accountId, input.sourceId);
  const from = instantOf(input.capturedOrdersFromUtc);
  if (!from) throw fail('capturedOrdersFromUtc must be an ISO 8601 instant', [{ path: 'capturedOrdersFromUtc', problem: 'must be an ISO 8601 instant with offset' }]);
  // Live capture is complete from attributionStartedAtUtc on: a baseline can only extend the window back.
  if (from.getTime() > current.attributionStartedAtUtc.getTime()) {
    throw fail('capturedOrdersFromUtc must not be after attributionStartedAtUtc', [{ path: 'capturedOrdersFromUtc', problem: `must be at or before ${current.attributionStartedAtUtc.toISOString()}` }]);
  }
  const set = { capturedOrdersFromUtc: from, baselineOpen: !input.complete };
  await purchaseSourcesOf(deps.purchases, accountId).setBaseline(current._id, set);
  return { ...current, ...set };
}

export async function ingestOrders(deps: PurchaseDeps, accountId: string, input: { sourceId: string; orders: OrderInput[] }): Promise<{ accepted: number; duplicates: number }> {
  const { projection } = deps;
  const repo = purchaseSourcesOf(deps.purchases, accountId);
  const source = await loadSource(deps, accountId, input.sourceId);
  const orders = input.orders ?? [];
  if (orders.length > MAX_ORDERS_PER_CALL) throw fail(`at most ${MAX_ORDERS_PER_CALL} orders per call`, [{ path: 'orders', problem: `${orders.length} orders, at most ${MAX_ORDERS_PER_CALL} allowed` }]);
  const problems = orders.flatMap(orderProblems);
  if (problems.length > 0) throw fail(problems[0].problem, problems.slice(0, 50));

  let accepted = 0;
  let duplicates = 0;
  const seen = new Set<string>();
  // Serialized with the projection's writes of the account, so a contact created concurrently
  // either exists here (the order goes onto it) or finds the pending order when applied.
  await projection.withAccount(accountId, async () => {
    for (const o of orders) {
      const orderId = o.orderId.trim();
      if (seen.has(orderId)) {
        duplicates++;
        continue;
      }
      seen.add(orderId);
      const email = canonicalEmail(o.email);
      const order = toContactOrder({ orderId, sourceId: source._id, orderedAt: o.orderedAt, currency: o.currency, amount: o.amount, couponCode: o.couponCode ?? null, items: o.items ?? [] });
      const outcome = await repo.ingestOrder(projection, { id: newIdOf(deps), sourceId: source._id, orderId, email, order, at: nowOf(deps) });
      if (outcome === 'accepted') accepted++;
      else duplicates++;
    }
  });
  return { accepted, duplicates };
}
