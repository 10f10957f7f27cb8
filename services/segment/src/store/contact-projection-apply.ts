/**
 * Applying the subscriber service's DOMAIN events to the contacts collection one event at a time
 * (contact-projection.ts adds the batched way, with the same result).
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
 * Writes for one account are serialized in this process (account-lock.ts); the conditional writes below
 * (version filters, duplicate-key retry) keep a second replica sharing the durable from regressing a
 * contact, though deletion (contact + tombstone) assumes one applier per account at a time.
 */
import { acrossAccounts, Collection, DuplicateKeyError, Store } from '@mailer/store';
import { foldEngagement, type EngagementEvent } from '../domain/engagement';
import { KeyedLock } from './account-lock';
import { MalformedEventError, type CatalogEvent, type SubscriberEvent } from '../events/facts';
import { subscriberPart } from './contact-events';
import { contactsCollection, projectionCatalogCollection, tombstonesCollection, type ContactTombstone, type ProjectedContact, type ProjectionCatalog } from './contact-schemas';
import { purchaseCollections, type PendingOrderDoc } from './purchase-sources';

export type ApplyOutcome = 'applied' | 'stale' | 'ignored';

/** A DOMAIN fact the projection applies, read and typed. */
export type ContactFact = { kind: 'subscriber'; e: SubscriberEvent } | { kind: 'catalog'; e: CatalogEvent } | { kind: 'engagement'; e: EngagementEvent };

export class ContactApplier {
  readonly contacts: Collection<ProjectedContact>;
  readonly tombstones: Collection<ContactTombstone>;
  readonly catalogs: Collection<ProjectionCatalog>;
  readonly pendingOrders: Collection<PendingOrderDoc>;
  protected readonly locks = new KeyedLock();

  constructor(readonly store: Store) {
    this.contacts = contactsCollection(store);
    this.pendingOrders = purchaseCollections(store).pending;
    this.tombstones = tombstonesCollection(store);
    this.catalogs = projectionCatalogCollection(store);
  }

  /**
   * Applies one fact read from DOMAIN (app/project-contacts.ts reads and types them). `seq` is the
   * event's DOMAIN stream sequence (orders topic enrollment against subscriber events). Store errors propagate.
   */
  async applyFact(fact: ContactFact, seq = 0): Promise<ApplyOutcome> {
    if (fact.kind === 'subscriber') return this.applySubscriberEvent(fact.e, seq);
    if (fact.kind === 'catalog') return this.applyCatalogEvent(fact.e, seq);
    const e = fact.e;
    return this.locks.run(e.accountId, () => this.applyEngagementLocked(e));
  }

  /**
   * Folds a delivery/engagement fact into the contact's three instants. A fact about a contact this
   * projection does not have (deleted, or another account's subscriber) is ignored: DOMAIN orders a
   * subscriber's creation before any email to it.
   */
  protected async applyEngagementLocked(e: EngagementEvent): Promise<ApplyOutcome> {
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
    const contact = await this.contacts.findOne({ accountId, _id: contactId }, { projection: { orders: 1 } });
    if (!contact) return;
    const have = new Set((contact.orders ?? []).map((o) => `${o.sourceId}\u0000${o.orderId}`));
    const add = waiting.map((w) => ({ ...w.order, orderedAt: new Date(w.order.orderedAt) })).filter((o) => !have.has(`${o.sourceId}\u0000${o.orderId}`));
    await this.store.transaction(async (tx) => {
      if (add.length > 0) await this.contacts.updateOne({ accountId, _id: contactId }, { $push: { orders: { $each: add } } }, { tx });
      await this.pendingOrders.deleteMany({ accountId, _id: { $in: waiting.map((w) => w._id) } }, { tx });
    });
  }

  applySubscriberEvent(e: SubscriberEvent, seq = 0): Promise<ApplyOutcome> {
    return this.locks.run(e.accountId, () => this.applySubscriberLocked(e, seq));
  }

  protected async applySubscriberLocked(e: SubscriberEvent, seq: number): Promise<ApplyOutcome> {
    {
      const id = e.subscriber.id;
      // Tombstones are keyed by subscriber id across accounts, as the contacts are (cross-account reads
      // by design: an id is never reused, and one held by another account is refused below).
      const tomb = await acrossAccounts(this.tombstones).findOne({ _id: id });
      if (tomb && tomb.version >= e.version) return 'stale';
      const current = await acrossAccounts(this.contacts).findOne({ _id: id }, { projection: { version: 1, accountId: 1 } });
      if (current && (current.version ?? 0) >= e.version) return 'stale';
      if (current && current.accountId !== e.accountId) throw new MalformedEventError(`${e.type} fact`, `subscriber ${id} belongs to another account`);
      if (e.type === 'subscriber.deleted') {
        await this.store.transaction(async (tx) => {
          await this.contacts.deleteOne({ accountId: e.accountId, _id: id }, { tx });
          await acrossAccounts(this.tombstones).updateOne({ _id: id }, { $set: { accountId: e.accountId, version: e.version } }, { upsert: true, tx });
        });
        return 'applied';
      }
      const catalog = await this.catalogs.findOne({ _id: e.accountId });
      const part = this.partWithEnrollments(e, catalog, seq);
      const { _id, ...set } = part;
      for (;;) {
        const existing = current ?? (await this.contacts.findOne({ accountId: e.accountId, _id: id }, { projection: { version: 1 } }));
        if (existing) {
          const r = await this.contacts.updateOne(
            { accountId: e.accountId, _id: id, $or: [{ version: { $lt: e.version } }, { version: { $exists: false } }] },
            { $set: { ...set, seq } },
          );
          if (r.matchedCount === 0) return 'stale';
          await this.attachPendingOrders(e.accountId, part.email, id);
          return 'applied';
        }
        try {
          await this.contacts.insertOne({ ...part, seq, orders: [] });
          if (tomb) await acrossAccounts(this.tombstones).deleteOne({ _id: id, version: tomb.version });
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

  protected async applyCatalogLocked(e: CatalogEvent, seq: number): Promise<ApplyOutcome> {
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
                  filter: { accountId: a, _id: c._id, topics: { $ne: id }, ...unchanged('version', c.version), ...unchanged('seq', c.seq) },
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
  /** The subscriber part of a contact, plus topics enrolled (topic.created with enrolledExistingSubscribers) after this event's position. */
  protected partWithEnrollments(e: SubscriberEvent, catalog: ProjectionCatalog | null, seq: number) {
    const part = subscriberPart(e, catalog);
    for (const en of catalog?.enrollments ?? []) {
      if (seq > 0 && en.seq > seq && !part.topics.includes(en.topicId) && !part.optOuts.some((o) => o.topicId === en.topicId)) {
        part.topics = [...part.topics, en.topicId].sort();
      }
    }
    return part;
  }
}
