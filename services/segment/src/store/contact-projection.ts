/**
 * The contact projection (app/project-contacts.ts applies DOMAIN facts with it): ContactApplier's
 * one-event way plus applyFacts, which applies a run of facts in a few store calls with the same result.
 */
import { acrossAccounts, type AccountFilter, type BulkOp, DuplicateKeyError } from '@mailer/store';
import type { EngagementEvent } from '../domain/engagement';
import { MalformedEventError, type CatalogEvent, type SubscriberEvent } from '../events/facts';
import type { subscriberPart } from './contact-events';
import type { ContactTombstone } from './contact-schemas';
import { ContactApplier, type ApplyOutcome, type ContactFact } from './contact-projection-apply';
import type { PendingOrderDoc } from './purchase-sources';

type SubscriberStep = { e: SubscriberEvent; seq: number; i: number };

/** What applying a run of events one by one would have done to one subscriber (applyFacts). */
interface SimState {
  stored: { version?: number; accountId: string } | null;
  storedTomb: ContactTombstone | null;
  exists: boolean;
  version?: number;
  accountId?: string;
  tomb: { accountId: string; version: number } | null;
  tombChanged: boolean;
  /** The contact was inserted during the run (a new incarnation: orders start empty). */
  fresh: boolean;
  /** The stored contact was deleted during the run. */
  removedStored: boolean;
  part?: ReturnType<typeof subscriberPart>;
  seq?: number;
  /** Pending orders attached to the current incarnation during the run. */
  attach: PendingOrderDoc['order'][];
  have?: Set<string>;
}

const orderKey = (o: { sourceId: string; orderId: string }) => `${o.sourceId}\u0000${o.orderId}`;

/** A batch's verdict on one event: an outcome, or the MalformedEventError that makes it poison. */
export type BatchOutcome = ApplyOutcome | MalformedEventError;

/** Another writer (a replica sharing the durable) changed a contact under a batch: the batch is redone one event at a time. */
class BatchConflict extends Error {}

export class ContactProjection extends ContactApplier {
  /**
   * Applies facts read from DOMAIN (app/project-contacts.ts), given in stream order with their index
   * `i` in the batch, with the same result (store state and outcome per event in `outcomes[i]`) as
   * applyFact() on each in turn, in a few store calls: the runs of subscriber events between catalog
   * events are read with one query per collection ($in), simulated in memory under the rules above
   * (only each subscriber's last applied state is written) and written in one transaction; catalog
   * and engagement events, rare or account-wide, go the one-event way in between. Holds the locks of
   * every account involved. Store errors propagate, with nothing of the failing run written.
   */
  async applyFacts(facts: ReadonlyArray<{ fact: ContactFact; seq: number; i: number }>, outcomes: BatchOutcome[]): Promise<void> {
    const steps: Array<SubscriberStep | { catalog: CatalogEvent; seq: number; i: number } | { engagement: EngagementEvent; seq: number; i: number }> = facts.map(({ fact, seq, i }) =>
      fact.kind === 'subscriber' ? { e: fact.e, seq, i } : fact.kind === 'catalog' ? { catalog: fact.e, seq, i } : { engagement: fact.e, seq, i },
    );
    if (steps.length === 0) return;
    const accounts = steps.map((s) => ('e' in s ? s.e.accountId : 'catalog' in s ? s.catalog.accountId : s.engagement.accountId));
    await this.locks.runAll(accounts, async () => {
      let run: SubscriberStep[] = [];
      for (const step of steps) {
        if ('e' in step) {
          run.push(step);
          continue;
        }
        // Catalog and engagement events go one at a time, in their place (after the run before them is written).
        if (run.length > 0) await this.applySubscriberRun(run, outcomes);
        run = [];
        outcomes[step.i] = 'catalog' in step ? await this.applyCatalogLocked(step.catalog, step.seq) : await this.applyEngagementLocked(step.engagement);
      }
      if (run.length > 0) await this.applySubscriberRun(run, outcomes);
    });
  }

  private async applySubscriberRun(run: SubscriberStep[], outcomes: BatchOutcome[]): Promise<void> {
    try {
      await this.applySubscriberBatch(run, outcomes);
    } catch (err) {
      if (!(err instanceof BatchConflict || err instanceof DuplicateKeyError)) throw err;
      // another writer changed these contacts meanwhile: the one-event way handles every race
      for (const { e, seq, i } of run) {
        try {
          outcomes[i] = await this.applySubscriberLocked(e, seq);
        } catch (err2) {
          if (!(err2 instanceof MalformedEventError)) throw err2;
          outcomes[i] = err2;
        }
      }
    }
  }

  /** One run of subscriber events (no catalog event in between), under the accounts' locks. */
  private async applySubscriberBatch(run: SubscriberStep[], outcomes: BatchOutcome[]): Promise<void> {
    const ids = [...new Set(run.map((s) => s.e.subscriber.id))];
    const accounts = [...new Set(run.map((s) => s.e.accountId))];
    const emails = [...new Set(run.filter((s) => s.e.type !== 'subscriber.deleted').map((s) => s.e.subscriber.email.toLowerCase()))];
    const [tombs, currents, catalogs, waiting] = await Promise.all([
      // Cross-account by design, as in the one-event way (contact-projection-apply.ts).
      acrossAccounts(this.tombstones).find({ _id: { $in: ids } }),
      acrossAccounts(this.contacts).find({ _id: { $in: ids } }, { projection: { version: 1, accountId: 1 } }),
      this.catalogs.find({ _id: { $in: accounts } }),
      emails.length > 0 ? this.pendingOrders.find({ accountId: { $in: accounts }, email: { $in: emails } }) : Promise.resolve([]),
    ]);
    const catalogOf = new Map(catalogs.map((c) => [c._id, c]));
    const waitingBy = new Map<string, PendingOrderDoc[]>();
    for (const w of waiting) {
      const key = `${w.accountId}\u0000${w.email}`;
      const list = waitingBy.get(key);
      if (list) list.push(w);
      else waitingBy.set(key, [w]);
    }
    const stored = new Map(currents.map((c) => [c._id, c]));
    const storedTombs = new Map(tombs.map((t) => [t._id, t]));
    const states = new Map<string, SimState>();
    const stateOf = (id: string): SimState => {
      let st = states.get(id);
      if (!st) {
        const c = stored.get(id);
        const t = storedTombs.get(id);
        st = {
          stored: c ?? null,
          storedTomb: t ?? null,
          exists: !!c,
          version: c?.version,
          accountId: c?.accountId,
          tomb: t ? { accountId: t.accountId, version: t.version } : null,
          tombChanged: false,
          fresh: false,
          removedStored: false,
          attach: [],
        };
        states.set(id, st);
      }
      return st;
    };
    // The stored orders of contacts that may receive pending orders (dedupe as attachPendingOrders does).
    const storedOrders = new Map<string, Set<string>>();
    if (waitingBy.size > 0) {
      const need = run.filter((s) => stored.has(s.e.subscriber.id) && waitingBy.has(`${s.e.accountId}\u0000${s.e.subscriber.email.toLowerCase()}`)).map((s) => s.e.subscriber.id);
      if (need.length > 0) {
        for (const c of await this.contacts.find({ accountId: { $in: accounts }, _id: { $in: [...new Set(need)] } }, { projection: { orders: 1 } })) {
          storedOrders.set(c._id, new Set((c.orders ?? []).map((o) => orderKey(o))));
        }
      }
    }
    const consumed: string[] = [];

    for (const { e, seq, i } of run) {
      const id = e.subscriber.id;
      const st = stateOf(id);
      if (st.tomb && st.tomb.version >= e.version) {
        outcomes[i] = 'stale';
        continue;
      }
      if (st.exists && (st.version ?? 0) >= e.version) {
        outcomes[i] = 'stale';
        continue;
      }
      if (st.exists && st.accountId !== e.accountId) {
        outcomes[i] = new MalformedEventError(`${e.type} fact`, `subscriber ${id} belongs to another account`);
        continue;
      }
      outcomes[i] = 'applied';
      if (e.type === 'subscriber.deleted') {
        if (st.exists && !st.fresh) st.removedStored = true;
        st.exists = false;
        st.fresh = false;
        st.part = undefined;
        st.attach = [];
        st.have = undefined;
        st.tomb = { accountId: e.accountId, version: e.version };
        st.tombChanged = true;
        continue;
      }
      const part = this.partWithEnrollments(e, catalogOf.get(e.accountId) ?? null, seq);
      if (!st.exists) {
        // insert (a new incarnation): no orders yet, and the tombstone it supersedes goes
        st.exists = true;
        st.fresh = true;
        st.accountId = e.accountId;
        st.attach = [];
        st.have = new Set();
        if (st.tomb) {
          st.tomb = null;
          st.tombChanged = true;
        }
      }
      st.version = e.version;
      st.part = part;
      st.seq = seq;
      const key = `${e.accountId}\u0000${part.email}`;
      const w = waitingBy.get(key);
      if (w && w.length > 0) {
        const have = (st.have ??= storedOrders.get(id) ?? new Set());
        const add = w.map((x) => ({ ...x.order, orderedAt: new Date(x.order.orderedAt) })).filter((o) => !have.has(orderKey(o)));
        for (const o of add) have.add(orderKey(o));
        st.attach.push(...add);
        consumed.push(...w.map((x) => x._id));
        waitingBy.set(key, []);
      }
    }

    const contactOps: BulkOp<AccountFilter>[] = [];
    const tombOps: BulkOp[] = [];
    let updates = 0;
    for (const [id, st] of states) {
      if (st.exists && st.fresh) {
        if (st.removedStored) contactOps.push({ deleteOne: { filter: { accountId: st.stored!.accountId, _id: id } } });
        contactOps.push({ insertOne: { document: { ...st.part!, seq: st.seq, orders: st.attach } } });
      } else if (st.exists && st.part) {
        const { _id, ...set } = st.part;
        const update: Record<string, unknown> = { $set: { ...set, seq: st.seq } };
        if (st.attach.length > 0) update.$push = { orders: { $each: st.attach } };
        contactOps.push({ updateOne: { filter: { accountId: st.accountId!, _id: id, $or: [{ version: { $lt: st.version } }, { version: { $exists: false } }] }, update } });
        updates++;
      } else if (!st.exists && st.removedStored) {
        contactOps.push({ deleteOne: { filter: { accountId: st.stored!.accountId, _id: id } } });
      }
      if (st.tombChanged) {
        if (st.tomb) tombOps.push({ updateOne: { filter: { _id: id }, update: { $set: { accountId: st.tomb.accountId, version: st.tomb.version } }, upsert: true } });
        else if (st.storedTomb) tombOps.push({ deleteOne: { filter: { _id: id, version: st.storedTomb.version } } });
      }
    }
    if (contactOps.length === 0 && tombOps.length === 0 && consumed.length === 0) return;
    await this.store.transaction(async (tx) => {
      if (contactOps.length > 0) {
        const r = await this.contacts.bulkWrite(contactOps, { tx });
        if (r.matchedCount < updates) throw new BatchConflict('a contact changed under the batch');
      }
      if (tombOps.length > 0) await acrossAccounts(this.tombstones).bulkWrite(tombOps, { tx });
      if (consumed.length > 0) await this.pendingOrders.deleteMany({ accountId: { $in: accounts }, _id: { $in: consumed } }, { tx });
    });
  }
}
