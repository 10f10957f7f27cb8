// "Who uses this?" across services (mailer.common.v1.ReferenceService). A record that other services
// can name (a segment, a topic) is deleted only once every service that may name it says nothing
// does: its owner asks them all at once (referenceCheck) and each of them answers from its own store
// (referenceHandlers). A new kind of user (e.g. broadcasts in the messaging service) joins by
// answering in its service's list function; the owners do not change.
import { referencesV1 } from '@mailer/proto';
import { accountOf, DomainError, failedPrecondition, type Problem } from './errors';
import { createClient } from './grpc-client';
import type { AsyncHandlers } from './grpc-server';
import type { Logger } from './logger';
import { peerFailure, type PeerSpec } from './peer';
import { protoEnum } from './proto-enum';
import { TIME_LIMITS } from './time-limits';

const Kinds = protoEnum(referencesV1.ReferencedKind, 'REFERENCED_KIND_');
export type ReferencedKind = (typeof Kinds.names)[number];

/** One record naming the referenced one, e.g. `{ collection: 'rssNewsletters', id, name, use: 'sends to this segment' }`. */
export type Reference = referencesV1.Reference;

/** Every user in the account (`count`) and up to REFERENCES_SHOWN of them. */
export interface ReferenceList {
  count: number;
  references: Reference[];
}

export const REFERENCES_SHOWN = 50;

/** What the owner says of its record in messages, and the errorId of a refused delete. */
const RECORDS: Record<ReferencedKind, { noun: string; inUse: string }> = {
  SEGMENT: { noun: 'segment', inUse: 'segment_in_use' },
  TOPIC: { noun: 'topic', inUse: 'topic_in_use' },
};

/**
 * The ReferenceService of a service whose records can name others' (server side): `list` answers
 * from its store. An id no record could have (empty, too long) names nothing.
 */
export function referenceHandlers(list: (accountId: string, kind: ReferencedKind, id: string) => Promise<ReferenceList>): AsyncHandlers<referencesV1.ReferenceServiceServer> {
  return {
    async listReferences(req) {
      const accountId = accountOf(req);
      const kind = Kinds.tryFromProto(req.kind);
      const id = (req.id ?? '').toLowerCase();
      if (!kind || id === '' || id.length > 100) return { count: 0, references: [] };
      return list(accountId, kind, id);
    },
  };
}

export interface ReferenceCheck {
  /**
   * Resolves when no service names the record. Throws FAILED_PRECONDITION `<kind>_in_use` with the
   * users in `details` (`<collection>.<id>`) while any does, and UNAVAILABLE service_unavailable
   * while one does not answer: a delete that cannot be proven safe is not done.
   */
  refuseWhileReferenced(accountId: string, kind: ReferencedKind, id: string): Promise<void>;
  close(): void;
}

/** The owner's side: `users` maps each service that may name its records to that service's address. */
export function referenceCheck(users: Record<string, string>, logger?: Logger): ReferenceCheck {
  const sources = Object.entries(users).map(([service, address]) => ({
    client: createClient(referencesV1.ReferenceServiceClient, address, TIME_LIMITS.peerCall),
    peer: (noun: string): PeerSpec => ({
      service,
      errorId: 'service_unavailable',
      message: `The ${service} service, which knows what uses this ${noun}, is unavailable; nothing was deleted, retry later.`,
      logger,
    }),
  }));
  return {
    async refuseWhileReferenced(accountId, kind, id) {
      const { noun, inUse } = RECORDS[kind];
      const answers = await Promise.all(
        sources.map(({ client, peer }) =>
          client.listReferences({ accountId, kind: Kinds.toProto(kind), id }).then(
            (list): ReferenceList | DomainError => list,
            (err: unknown) => {
              const failure = peerFailure(peer(noun), err);
              if (failure instanceof DomainError) return failure;
              throw failure;
            },
          ),
        ),
      );
      const lists = answers.filter((a): a is ReferenceList => !(a instanceof DomainError));
      const count = lists.reduce((sum, l) => sum + l.count, 0);
      // Users found make the answer even when another service did not answer: the delete is refused either way.
      if (count > 0) {
        const references = lists.flatMap((l) => l.references);
        const collections = [...new Set(references.map((r) => r.collection))].join(', ');
        const details: Problem[] = references.slice(0, REFERENCES_SHOWN).map((r) => ({ path: `${r.collection}.${r.id}`, problem: `"${r.name}" ${r.use}` }));
        throw failedPrecondition(inUse, `the ${noun} is used by ${count} record(s) (${collections}); change or delete them first`, details);
      }
      const failure = answers.find((a): a is DomainError => a instanceof DomainError);
      if (failure) throw failure;
    },
    close() {
      for (const s of sources) s.client.close();
    },
  };
}
