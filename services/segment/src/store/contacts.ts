/**
 * The segment service's contacts collection (one Contact per subscriber, see domain/contact.ts) and the
 * projection repository that builds it from the subscriber service's DOMAIN events.
 *
 * Ordering rules (the consumer may redeliver, and runs handlers for different accounts concurrently):
 * - Every subscriber event carries the subscriber's whole state and its `version`. A contact keeps the
 *   highest version applied (`version`); an event whose version is not above it is ignored, so
 *   duplicates and late older events are harmless.
 * - `subscriber.deleted` removes the contact and leaves a tombstone {subscriberId, version} in
 *   `contact_tombstones`, so a late older `subscriber.updated` cannot resurrect it.
 * - Catalog events are account-wide. tag/topic/field ids are never reused, so a deletion is recorded
 *   per account (`projection_catalog`) and also stripped from any subscriber event applied later
 *   (a late older event still listing the tag cannot bring it back). A topic created with
 *   `enrolledExistingSubscribers` is recorded with its stream sequence: it is applied to contacts whose
 *   state comes from before that sequence (`seq`), and to a subscriber event from before it applied late.
 * - Subscriber events write only the subscriber part of a contact; orders (ingested through
 *   IngestOrders) are never touched by them, except that applying a subscriber (created/updated)
 *   attaches the orders waiting in `pending_orders` for its email (orders ingested before the
 *   contact existed). Delivery/engagement events (email.delivered/opened/clicked) write only
 *   lastDeliveredAt, lastResponseAt and firstUnansweredDeliveryAt (domain/engagement.ts).
 *
 * Writes for one account are serialized in this process (AccountLocks); the conditional writes below
 * (version filters, duplicate-key retry) keep a second replica sharing the durable from regressing a
 * contact, though deletion (contact + tombstone) assumes one applier per account at a time.
 */
import { type BulkOp, Collection, DuplicateKeyError, Store, mongoose } from '@mailer/store';
import { BUILT_IN_KEYS, Contact, ContactFieldValue, textValue, toContactFieldValue } from '../domain/contact';
import { ENGAGEMENT_TYPES, foldEngagement, type EngagementEvent } from '../domain/engagement';
import { CATALOG_TYPES, MalformedEventError, parseCatalogEvent, parseEngagementEvent, parseSubscriberEvent, type CatalogEvent, type SubscriberEvent } from '../events/facts';
import { purchaseCollections, type PendingOrderDoc } from './purchase-sources';

const { Schema } = mongoose;

const orderItemSchema = new Schema({ productId: { type: String, required: true }, variantId: String, groupId: String }, { _id: false });
const orderSchema = new Schema(
  {
    orderId: { type: String, required: true },
    sourceId: { type: String, required: true },
    orderedAt: { type: Date, required: true },
    currency: { type: String, required: true },
    amount: { type: Number, required: true },
    couponCode: String,
    items: [orderItemSchema],
  },
  { _id: false },
);

export const contactSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    firstName: String,
    subscriberStatus: { type: String, required: true },
    registeredAt: { type: Date, required: true },
    tags: [String],
    topics: [String],
    optOuts: [new Schema({ topicId: String, at: Date }, { _id: false })],
    // Keys are field ids: a Mixed map of typed values ({text, folded} | {number} | ...).
    fields: { type: Schema.Types.Mixed, default: {} },
    orders: [orderSchema],
    lastDeliveredAt: Date,
    lastResponseAt: Date,
    firstUnansweredDeliveryAt: Date,
    // Projection bookkeeping: the subscriber version applied, and the DOMAIN stream sequence it came from.
    version: Number,
    seq: Number,
  },
  { versionKey: false, minimize: false },
);
// Every segment query is scoped to one account, so accountId leads every index.
contactSchema.index({ accountId: 1, registeredAt: 1, _id: 1 });
contactSchema.index({ accountId: 1, email: 1 });
contactSchema.index({ accountId: 1, tags: 1 });
contactSchema.index({ accountId: 1, topics: 1 });
// Segment conditions (README "Segment queries on MongoDB (indexes)"): PURCHASES conditions are one
// $elemMatch per zone on sourceId + orderedAt (multikey over the embedded orders, bounds compounded
// within the element); TOPIC_OPTED_OUT reads optOuts.topicId.
contactSchema.index({ accountId: 1, 'orders.sourceId': 1, 'orders.orderedAt': 1 });
contactSchema.index({ accountId: 1, 'optOuts.topicId': 1 });

/** A contact as stored by the projection. */
export type ProjectedContact = Contact & { version?: number; seq?: number };

export interface ContactTombstone {
  _id: string;
  accountId: string;
  version: number;
}
const tombstoneSchema = new Schema({ _id: String, accountId: { type: String, required: true }, version: { type: Number, required: true } }, { versionKey: false });
tombstoneSchema.index({ accountId: 1 });

export interface ProjectionCatalog {
  /** The account id. */
  _id: string;
  deletedTags: string[];
  deletedTopics: string[];
  deletedFields: string[];
  enrollments: Array<{ topicId: string; seq: number }>;
}
const catalogSchema = new Schema(
  {
    _id: String,
    deletedTags: [String],
    deletedTopics: [String],
    deletedFields: [String],
    enrollments: [new Schema({ topicId: String, seq: Number }, { _id: false })],
  },
  { versionKey: false, minimize: false },
);

export function contactsCollection(store: Store): Collection<ProjectedContact> {
  return store.collection<ProjectedContact>('contacts', contactSchema);
}

// ------------------------------------------------------------------ events

// The facts read here are parsed with the shared definitions in events/facts.ts.
export { CATALOG_TYPES, MalformedEventError, type CatalogEvent, type SubscriberEvent } from '../events/facts';

/** The subscriber-owned part of a contact, from an event (catalog deletions already known stripped). */
export function subscriberPart(e: SubscriberEvent, catalog?: ProjectionCatalog | null): Omit<ProjectedContact, 'orders' | 'lastDeliveredAt' | 'lastResponseAt' | 'firstUnansweredDeliveryAt' | 'seq'> {
  const s = e.subscriber;
  const deletedTags = new Set(catalog?.deletedTags ?? []);
  const deletedTopics = new Set(catalog?.deletedTopics ?? []);
  const deletedFields = new Set(catalog?.deletedFields ?? []);
  const email = s.email.toLowerCase();
  const firstName = typeof s.firstName === 'string' && s.firstName !== '' ? s.firstName : null;
  const fields: Record<string, ContactFieldValue> = { [BUILT_IN_KEYS.EMAIL]: textValue(email) };
  if (firstName !== null) fields[BUILT_IN_KEYS.FIRST_NAME] = textValue(firstName);
  for (const f of s.fields) {
    if (deletedFields.has(f.fieldId)) continue;
    const v = toContactFieldValue(f.value);
    if (v) fields[f.fieldId] = v;
  }
  return {
    _id: s.id,
    accountId: e.accountId,
    email,
    firstName,
    subscriberStatus: s.subscriberStatus,
    registeredAt: new Date(s.registeredAt),
    tags: [...new Set(s.tags.filter((t) => !deletedTags.has(t)))].sort(),
    topics: [...new Set(s.topicIds.filter((t) => !deletedTopics.has(t)))].sort(),
    optOuts: s.optOuts.filter((o) => !deletedTopics.has(o.topicId)).map((o) => ({ topicId: o.topicId, at: new Date(o.at) })),
    fields,
    version: e.version,
  };
}

// ------------------------------------------------------------------ repository

export type ApplyOutcome = 'applied' | 'stale' | 'ignored';

type SubscriberStep = { e: SubscriberEvent; seq: number; i: number };

/** What applying a run of events one by one would have done to one subscriber (applyBatch). */
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

/**
 * Serializes async work per key (one account at a time in this process). runAll queues on several
 * keys at once, synchronously: each key's queue keeps call order, so multi-key work cannot deadlock.
 */
class KeyedLock {
  private tails = new Map<string, Promise<unknown>>();
  run<R>(key: string, fn: () => Promise<R>): Promise<R> {
    return this.runAll([key], fn);
  }
  runAll<R>(keys: Iterable<string>, fn: () => Promise<R>): Promise<R> {
    const unique = [...new Set(keys)];
    const prevs = unique.map((k) => this.tails.get(k)).filter((p) => p !== undefined);
    const next = (prevs.length === 0 ? Promise.resolve() : Promise.all(prevs)).then(fn);
    const tail = next.catch(() => undefined);
    for (const key of unique) this.tails.set(key, tail);
    void tail.then(() => {
      for (const key of unique) if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

export class ContactProjection {
  readonly contacts: Collection<ProjectedContact>;
  readonly tombstones: Collection<ContactTombstone>;
  readonly catalogs: Collection<ProjectionCatalog>;
  readonly pendingOrders: Collection<PendingOrderDoc>;
  private readonly locks = new KeyedLock();

  constructor(readonly store: Store) {
    this.contacts = contactsCollection(store);
    this.pendingOrders = purchaseCollections(store).pending;
    this.tombstones = store.collection<ContactTombstone>('contact_tombstones', tombstoneSchema);
    this.catalogs = store.collection<ProjectionCatalog>('projection_catalog', catalogSchema);
  }

  /**
   * Applies one DOMAIN event (subscriber.* or a catalog event); other types are 'ignored'.
   * `seq` is the event's DOMAIN stream sequence (orders topic enrollment against subscriber events).
   * Throws MalformedEventError for a payload of a handled type that does not parse; store errors propagate.
   */
  async apply(data: unknown, seq = 0): Promise<ApplyOutcome> {
    const type = (data as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type.startsWith('subscriber.')) return this.applySubscriberEvent(parseSubscriberEvent(data), seq);
    if (typeof type === 'string' && (CATALOG_TYPES as readonly string[]).includes(type)) return this.applyCatalogEvent(parseCatalogEvent(data), seq);
    if (typeof type === 'string' && (ENGAGEMENT_TYPES as readonly string[]).includes(type)) {
      const e = parseEngagementEvent(data);
      return e ? this.locks.run(e.accountId, () => this.applyEngagementLocked(e)) : 'ignored';
    }
    return 'ignored';
  }

  /**
   * Folds a delivery/engagement fact into the contact's three instants. A fact about a contact this
   * projection does not have (deleted, or another account's subscriber) is ignored: DOMAIN orders a
   * subscriber's creation before any email to it.
   */
  private async applyEngagementLocked(e: EngagementEvent): Promise<ApplyOutcome> {
    const contact = await this.contacts.findOne({ _id: e.subscriberId, accountId: e.accountId });
    if (!contact) return 'ignored';
    const facts = foldEngagement(contact, e);
    const same = (a: Date | null | undefined, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);
    if (same(contact.lastDeliveredAt, facts.lastDeliveredAt) && same(contact.lastResponseAt, facts.lastResponseAt) && same(contact.firstUnansweredDeliveryAt, facts.firstUnansweredDeliveryAt)) {
      return 'stale';
    }
    await this.contacts.updateOne({ _id: e.subscriberId, accountId: e.accountId }, { $set: facts });
    return 'applied';
  }

  /** Runs fn serialized with this process's projection writes of the account (order ingest uses it). */
  withAccount<R>(accountId: string, fn: () => Promise<R>): Promise<R> {
    return this.locks.run(accountId, fn);
  }

  /** Moves the orders waiting for `email` onto the contact (skipping any it already has). Call under the account lock. */
  async attachPendingOrders(accountId: string, email: string, contactId: string): Promise<void> {
    const waiting = await this.pendingOrders.find({ accountId, email });
    if (waiting.length === 0) return;
    const contact = await this.contacts.findOne({ _id: contactId }, { projection: { orders: 1 } });
    if (!contact) return;
    const have = new Set((contact.orders ?? []).map((o) => `${o.sourceId}\u0000${o.orderId}`));
    const add = waiting.map((w) => ({ ...w.order, orderedAt: new Date(w.order.orderedAt) })).filter((o) => !have.has(`${o.sourceId}\u0000${o.orderId}`));
    await this.store.transaction(async (tx) => {
      if (add.length > 0) await this.contacts.updateOne({ _id: contactId }, { $push: { orders: { $each: add } } }, { tx });
      await this.pendingOrders.deleteMany({ _id: { $in: waiting.map((w) => w._id) } }, { tx });
    });
  }

  applySubscriberEvent(e: SubscriberEvent, seq = 0): Promise<ApplyOutcome> {
    return this.locks.run(e.accountId, () => this.applySubscriberLocked(e, seq));
  }

  private async applySubscriberLocked(e: SubscriberEvent, seq: number): Promise<ApplyOutcome> {
    {
      const id = e.subscriber.id;
      const tomb = await this.tombstones.findOne({ _id: id });
      if (tomb && tomb.version >= e.version) return 'stale';
      const current = await this.contacts.findOne({ _id: id }, { projection: { version: 1, accountId: 1 } });
      if (current && (current.version ?? 0) >= e.version) return 'stale';
      if (current && current.accountId !== e.accountId) throw new MalformedEventError(`${e.type} fact`, `subscriber ${id} belongs to another account`);
      if (e.type === 'subscriber.deleted') {
        await this.store.transaction(async (tx) => {
          await this.contacts.deleteOne({ _id: id }, { tx });
          await this.tombstones.updateOne({ _id: id }, { $set: { accountId: e.accountId, version: e.version } }, { upsert: true, tx });
        });
        return 'applied';
      }
      const catalog = await this.catalogs.findOne({ _id: e.accountId });
      const part = this.partWithEnrollments(e, catalog, seq);
      const { _id, ...set } = part;
      for (;;) {
        const existing = current ?? (await this.contacts.findOne({ _id: id }, { projection: { version: 1 } }));
        if (existing) {
          const r = await this.contacts.updateOne(
            { _id: id, $or: [{ version: { $lt: e.version } }, { version: { $exists: false } }] },
            { $set: { ...set, seq } },
          );
          if (r.matchedCount === 0) return 'stale';
          await this.attachPendingOrders(e.accountId, part.email, id);
          return 'applied';
        }
        try {
          await this.contacts.insertOne({ ...part, seq, orders: [] });
          if (tomb) await this.tombstones.deleteOne({ _id: id, version: tomb.version });
          await this.attachPendingOrders(e.accountId, part.email, id);
          return 'applied';
        } catch (err) {
          if (!(err instanceof DuplicateKeyError)) throw err;
          // inserted concurrently by another replica: go the update way
        }
      }
    }
  }

  applyCatalogEvent(e: CatalogEvent, seq = 0): Promise<ApplyOutcome> {
    return this.locks.run(e.accountId, () => this.applyCatalogLocked(e, seq));
  }

  private async applyCatalogLocked(e: CatalogEvent, seq: number): Promise<ApplyOutcome> {
    {
      const a = e.accountId;
      const base = { deletedTags: [], deletedTopics: [], deletedFields: [], enrollments: [] };
      const ensure = () => this.catalogs.updateOne({ _id: a }, { $setOnInsert: base }, { upsert: true });
      switch (e.type) {
        case 'tag.deleted': {
          const id = e.tag!.id;
          await ensure();
          await this.catalogs.updateOne({ _id: a }, { $addToSet: { deletedTags: id } });
          await this.contacts.updateMany({ accountId: a, tags: id }, { $pull: { tags: id } });
          return 'applied';
        }
        case 'topic.deleted': {
          const id = e.topic!.id;
          await ensure();
          await this.catalogs.updateOne({ _id: a }, { $addToSet: { deletedTopics: id }, $pull: { enrollments: { topicId: id } } });
          await this.contacts.updateMany({ accountId: a, topics: id }, { $pull: { topics: id } });
          await this.contacts.updateMany({ accountId: a, 'optOuts.topicId': id }, { $pull: { optOuts: { topicId: id } } });
          return 'applied';
        }
        case 'field.deleted': {
          const id = e.field!.id;
          await ensure();
          await this.catalogs.updateOne({ _id: a }, { $addToSet: { deletedFields: id } });
          await this.contacts.updateMany({ accountId: a, [`fields.${id}`]: { $exists: true } }, { $unset: { [`fields.${id}`]: '' } });
          return 'applied';
        }
        case 'topic.created': {
          if (!e.enrolledExistingSubscribers) return 'ignored';
          const id = e.topic!.id;
          await ensure();
          const cat = await this.catalogs.findOne({ _id: a });
          if (cat?.deletedTopics.includes(id) || cat?.enrollments.some((x) => x.topicId === id)) return 'stale';
          await this.catalogs.updateOne({ _id: a }, { $push: { enrollments: { topicId: id, seq } } });
          // Contacts whose state is from before this event (a redelivered event may follow later ones).
          const enroll = {
            accountId: a,
            topics: { $ne: id },
            'optOuts.topicId': { $ne: id },
            ...(seq > 0 ? { $or: [{ seq: { $lt: seq } }, { seq: { $exists: false } }] } : {}),
          };
          // Read, then one $set of the sorted topics per contact (a $push with $sort costs far more on
          // the embedded store), each conditional on the contact's state being the one read.
          const targets = await this.contacts.find(enroll, { projection: { topics: 1, version: 1, seq: 1 } });
          const unchanged = (path: 'version' | 'seq', v: number | undefined) => ({ [path]: v === undefined || v === null ? { $exists: false } : v });
          if (targets.length > 0) {
            await this.contacts.bulkWrite(
              targets.map((c) => ({
                updateOne: {
                  filter: { _id: c._id, topics: { $ne: id }, ...unchanged('version', c.version), ...unchanged('seq', c.seq) },
                  update: { $set: { topics: [...(c.topics ?? []), id].sort() } },
                },
              })),
            );
          }
          // Whatever changed in between (another replica) still gets the topic, atomically.
          await this.contacts.updateMany(enroll, { $push: { topics: { $each: [id], $sort: 1 } } });
          return 'applied';
        }
      }
    }
  }
  /**
   * Applies DOMAIN events given in stream order, with the same result (store state and outcome per
   * event) as apply() on each in turn, in a few store calls: the runs of subscriber events between
   * catalog events are read with one query per collection ($in), simulated in memory under the rules
   * above (only each subscriber's last applied state is written) and written in one transaction;
   * catalog events, rare and account-wide, go the one-event way in between. Holds the locks of every
   * account involved. A malformed event gets its MalformedEventError as outcome (the others are
   * applied); store errors propagate, with nothing of the failing run written.
   */
  async applyBatch(events: Array<{ data: unknown; seq: number }>): Promise<BatchOutcome[]> {
    const outcomes: BatchOutcome[] = new Array(events.length);
    const steps: Array<SubscriberStep | { catalog: CatalogEvent; seq: number; i: number } | { engagement: EngagementEvent; seq: number; i: number }> = [];
    events.forEach(({ data, seq }, i) => {
      const type = (data as { type?: unknown } | null)?.type;
      try {
        if (typeof type === 'string' && type.startsWith('subscriber.')) steps.push({ e: parseSubscriberEvent(data), seq, i });
        else if (typeof type === 'string' && (CATALOG_TYPES as readonly string[]).includes(type)) steps.push({ catalog: parseCatalogEvent(data), seq, i });
        else if (typeof type === 'string' && (ENGAGEMENT_TYPES as readonly string[]).includes(type)) {
          const engagement = parseEngagementEvent(data);
          if (engagement) steps.push({ engagement, seq, i });
          else outcomes[i] = 'ignored';
        } else outcomes[i] = 'ignored';
      } catch (err) {
        if (!(err instanceof MalformedEventError)) throw err;
        outcomes[i] = err;
      }
    });
    if (steps.length === 0) return outcomes;
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
    return outcomes;
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
      this.tombstones.find({ _id: { $in: ids } }),
      this.contacts.find({ _id: { $in: ids } }, { projection: { version: 1, accountId: 1 } }),
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
        for (const c of await this.contacts.find({ _id: { $in: [...new Set(need)] } }, { projection: { orders: 1 } })) {
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

    const contactOps: BulkOp[] = [];
    const tombOps: BulkOp[] = [];
    let updates = 0;
    for (const [id, st] of states) {
      if (st.exists && st.fresh) {
        if (st.removedStored) contactOps.push({ deleteOne: { filter: { _id: id } } });
        contactOps.push({ insertOne: { document: { ...st.part!, seq: st.seq, orders: st.attach } } });
      } else if (st.exists && st.part) {
        const { _id, ...set } = st.part;
        const update: Record<string, unknown> = { $set: { ...set, seq: st.seq } };
        if (st.attach.length > 0) update.$push = { orders: { $each: st.attach } };
        contactOps.push({ updateOne: { filter: { _id: id, $or: [{ version: { $lt: st.version } }, { version: { $exists: false } }] }, update } });
        updates++;
      } else if (!st.exists && st.removedStored) {
        contactOps.push({ deleteOne: { filter: { _id: id } } });
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
      if (tombOps.length > 0) await this.tombstones.bulkWrite(tombOps, { tx });
      if (consumed.length > 0) await this.pendingOrders.deleteMany({ _id: { $in: consumed } }, { tx });
    });
  }

  /** The subscriber part of a contact, plus topics enrolled (topic.created with enrolledExistingSubscribers) after this event's position. */
  private partWithEnrollments(e: SubscriberEvent, catalog: ProjectionCatalog | null, seq: number) {
    const part = subscriberPart(e, catalog);
    for (const en of catalog?.enrollments ?? []) {
      if (seq > 0 && en.seq > seq && !part.topics.includes(en.topicId) && !part.optOuts.some((o) => o.topicId === en.topicId)) {
        part.topics = [...part.topics, en.topicId].sort();
      }
    }
    return part;
  }
}
