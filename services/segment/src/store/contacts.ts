// The contact projection's store, by concern: contact-schemas.ts (collections), contact-events.ts (the
// subscriber part of a contact), account-lock.ts, contact-projection-apply.ts (one event at a time), contact-projection.ts
// (batches). Re-exported here for the consumer (events/projection.ts), the tests and the benches.
export * from './contact-schemas';
export * from './contact-events';
// The facts read here are parsed with the shared definitions in events/facts.ts.
export { CATALOG_TYPES, MalformedEventError, type CatalogEvent, type SubscriberEvent } from '../events/facts';
export { type ApplyOutcome, ContactApplier, type ContactFact } from './contact-projection-apply';
export { type BatchOutcome, ContactProjection } from './contact-projection';
