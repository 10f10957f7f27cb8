// What the segment service's use cases are given (server.ts wires them): the collections the
// per-account repositories are made from, the subscriber service's catalog, the read-after-write
// wait, and the clock and id source.
import { randomUUID } from 'node:crypto';
import type { Collection } from '@mailer/store';
import type { ReferenceCheck } from '@mailer/kit/references';
import type { CatalogSource } from '../clients/catalog';
import type { ContactProjection, ProjectedContact } from '../store/contacts';
import { contactsOf } from '../store/contact-reads';
import { purchaseSourcesOf, type PurchaseCollections, type PurchaseSourceDoc } from '../store/purchase-sources';
import { segmentsOf, type SegmentDoc } from '../store/segments';

export interface SegmentDeps {
  segments: Collection<SegmentDoc>;
  contacts: Collection<ProjectedContact>;
  catalog: CatalogSource;
  /** Purchase sources and orders (absent: no account has purchase sources). */
  purchases?: PurchaseCollections;
  /**
   * Read-after-write: resolves once the contact projection has applied every DOMAIN message published
   * before the call, or throws UNAVAILABLE `segment_projection_lagging` (server.ts). Called first by
   * counts, previews and member pages. Absent: they read the projection as it is.
   */
  awaitProjection?: () => Promise<void>;
  /** The services whose records name segments (RSS newsletters, automations), asked before a delete; absent: none does. */
  references?: Pick<ReferenceCheck, 'refuseWhileReferenced'>;
  now?: () => Date;
  newId?: () => string;
}

export interface PurchaseDeps {
  purchases: PurchaseCollections;
  /** Order ingest is serialized with the projection's writes of the account (withAccount). */
  projection: ContactProjection;
  now?: () => Date;
  newId?: () => string;
}

export const nowOf = (deps: { now?: () => Date }): Date => (deps.now ? deps.now() : new Date());
export const newIdOf = (deps: { newId?: () => string }): string => (deps.newId ? deps.newId() : randomUUID());

/** The account's repositories (each filters every query by the account). */
export function repositoriesOf(deps: SegmentDeps, accountId: string) {
  return {
    segments: segmentsOf(deps.segments, accountId),
    contacts: contactsOf(deps.contacts, accountId),
    purchaseSources: (): Promise<PurchaseSourceDoc[]> => (deps.purchases ? purchaseSourcesOf(deps.purchases, accountId).list() : Promise.resolve([])),
  };
}
