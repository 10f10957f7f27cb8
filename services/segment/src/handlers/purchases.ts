// SegmentService, purchase part: purchase sources, order ingest and the capture baseline.
import { randomUUID } from 'node:crypto';
import { accountOf, conflict, invalid, notFound, type AsyncHandlers, type Problem } from '@mailer/kit';
import type { segmentV1 } from '@mailer/proto';
import { DuplicateKeyError } from '@mailer/store';
import { toContactOrder } from '../domain/contact';
import type { PurchaseSourceFacts } from '../domain/context';
import type { ContactProjection } from '../store/contacts';
import { canonicalEmail, type PurchaseCollections, type PurchaseSourceDoc } from '../store/purchase-sources';

export interface PurchaseDeps {
  purchases: PurchaseCollections;
  projection: ContactProjection;
  now?: () => Date;
  newId?: () => string;
}

type Names = 'createPurchaseSource' | 'listPurchaseSources' | 'ingestOrders' | 'setPurchaseBaseline';

export const MAX_ORDERS_PER_CALL = 1000;
const NAME_MAX = 200;
const ID_MAX = 200;
const CURRENCY = /^[A-Za-z]{3}$/;
/** An ISO 8601 instant with an explicit offset (Z or ±hh:mm), so no instant depends on the server's zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const sourceNotFound = (id: string) => notFound('purchase_source_not_found', `purchase source ${id} does not exist`);
const fail = (message: string, details: Problem[]) => invalid('validation_failed', message, details);

/** Whether the runtime knows the IANA zone (Intl refuses unknown ones with a RangeError). */
export function isIanaZone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.trim() === '' || zone.length > 100) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function instantOf(raw: string | undefined): Date | null {
  if (typeof raw !== 'string' || !INSTANT.test(raw)) return null;
  const d = new Date(raw);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function sourceToProto(s: PurchaseSourceDoc): segmentV1.PurchaseSource {
  return {
    id: s._id,
    name: s.name,
    timeZone: s.timeZone,
    capturedOrdersFromUtc: s.capturedOrdersFromUtc.toISOString(),
    capturedOrdersToUtc: s.capturedOrdersToUtc ? s.capturedOrdersToUtc.toISOString() : undefined,
    baselineOpen: s.baselineOpen,
    attributionStartedAtUtc: s.attributionStartedAtUtc.toISOString(),
  };
}

export function sourceFacts(s: PurchaseSourceDoc): PurchaseSourceFacts {
  return { id: s._id, timeZone: s.timeZone, capturedOrdersFromUtc: s.capturedOrdersFromUtc, capturedOrdersToUtc: s.capturedOrdersToUtc ?? null, baselineOpen: s.baselineOpen };
}

/** Checks one order; problems are pathed `orders[i].member`. */
function orderProblems(o: segmentV1.PurchaseOrder, i: number): Problem[] {
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

export function purchaseHandlers(deps: PurchaseDeps): Pick<AsyncHandlers<segmentV1.SegmentServiceServer>, Names> {
  const { purchases, projection } = deps;
  const { sources, orderIds, pending } = purchases;
  const contacts = projection.contacts;
  const now = () => (deps.now ? deps.now() : new Date());
  const newId = () => (deps.newId ? deps.newId() : randomUUID());

  async function load(accountId: string, id: string): Promise<PurchaseSourceDoc> {
    if (typeof id !== 'string' || id === '' || id.length > 100) throw sourceNotFound(String(id ?? ''));
    const doc = await sources.findOne({ _id: id, accountId });
    if (!doc) throw sourceNotFound(id);
    return doc;
  }

  return {
    async createPurchaseSource(req) {
      const accountId = accountOf(req);
      const name = (req.name ?? '').trim();
      if (name === '' || name.length > NAME_MAX) throw fail(`name must be 1 to ${NAME_MAX} characters`, [{ path: 'name', problem: `must be 1 to ${NAME_MAX} characters, not blank` }]);
      const zone = (req.timeZone ?? '').trim();
      if (!isIanaZone(zone)) throw invalid('purchase_source_invalid_time_zone', `"${zone}" is not an IANA time zone`, [{ path: 'timeZone', problem: 'must be an IANA time zone id, e.g. Europe/Berlin' }]);
      const at = now();
      const doc: PurchaseSourceDoc = {
        _id: newId(),
        accountId,
        name,
        timeZone: zone,
        capturedOrdersFromUtc: at,
        capturedOrdersToUtc: null,
        baselineOpen: true,
        attributionStartedAtUtc: at,
        createdAt: at,
      };
      try {
        await sources.insertOne(doc);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('purchase_source_name_taken', `a purchase source named "${name}" already exists`, [{ path: 'name', problem: 'already used by another purchase source' }]);
        throw err;
      }
      return { source: sourceToProto(doc) };
    },

    async listPurchaseSources(req) {
      const accountId = accountOf(req);
      return { items: (await sources.find({ accountId }, { sort: { createdAt: 1, _id: 1 } })).map(sourceToProto) };
    },

    async setPurchaseBaseline(req) {
      const accountId = accountOf(req);
      const current = await load(accountId, req.sourceId);
      const from = instantOf(req.capturedOrdersFromUtc);
      if (!from) throw fail('capturedOrdersFromUtc must be an ISO 8601 instant', [{ path: 'capturedOrdersFromUtc', problem: 'must be an ISO 8601 instant with offset' }]);
      // Live capture is complete from attributionStartedAtUtc on: a baseline can only extend the window back.
      if (from.getTime() > current.attributionStartedAtUtc.getTime()) {
        throw fail('capturedOrdersFromUtc must not be after attributionStartedAtUtc', [{ path: 'capturedOrdersFromUtc', problem: `must be at or before ${current.attributionStartedAtUtc.toISOString()}` }]);
      }
      const set = { capturedOrdersFromUtc: from, baselineOpen: !req.complete };
      await sources.updateOne({ _id: current._id, accountId }, { $set: set });
      return { source: sourceToProto({ ...current, ...set }) };
    },

    async ingestOrders(req) {
      const accountId = accountOf(req);
      const source = await load(accountId, req.sourceId);
      const orders = req.orders ?? [];
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
          const id = newId();
          try {
            await projection.store.transaction(async (tx) => {
              await orderIds.insertOne({ _id: id, accountId, sourceId: source._id, orderId, email, ingestedAt: now() }, { tx });
              const contact = await contacts.findOne({ accountId, email }, { projection: { _id: 1 } });
              if (contact) await contacts.updateOne({ _id: contact._id }, { $push: { orders: order } }, { tx });
              else await pending.insertOne({ _id: id, accountId, email, order }, { tx });
            });
            accepted++;
          } catch (err) {
            if (!(err instanceof DuplicateKeyError)) throw err;
            duplicates++;
          }
        }
      });
      return { accepted, duplicates };
    },
  };
}
