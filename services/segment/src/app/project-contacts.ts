// The contact projection's use case: DOMAIN events (subscriber, catalog and engagement facts) read
// and typed here, then applied to the contacts (store/contact-projection*.ts hold the ordering rules
// and the batched writes). The consumer (events/projection.ts) acks, terminates or retries by outcome.
import { ENGAGEMENT_TYPES } from '../domain/engagement';
import { CATALOG_TYPES, MalformedEventError, parseCatalogEvent, parseEngagementEvent, parseSubscriberEvent } from '../events/facts';
import type { ApplyOutcome, BatchOutcome, ContactFact, ContactProjection } from '../store/contacts';

export interface ProjectContactsDeps {
  projection: Pick<ContactProjection, 'applyFact' | 'applyFacts'>;
}

/**
 * The fact an event carries for the projection, or null for a type it does not use. Throws
 * MalformedEventError for a payload of a used type that does not parse.
 */
export function readContactFact(data: unknown): ContactFact | null {
  const type = (data as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return null;
  if (type.startsWith('subscriber.')) return { kind: 'subscriber', e: parseSubscriberEvent(data) };
  if ((CATALOG_TYPES as readonly string[]).includes(type)) return { kind: 'catalog', e: parseCatalogEvent(data) };
  if ((ENGAGEMENT_TYPES as readonly string[]).includes(type)) {
    const e = parseEngagementEvent(data);
    return e ? { kind: 'engagement', e } : null;
  }
  return null;
}

/**
 * Applies one DOMAIN event (`seq`: its stream sequence); other types are 'ignored'. Throws
 * MalformedEventError for a payload of a handled type that does not parse; store errors propagate.
 */
export async function applyContactEvent(deps: ProjectContactsDeps, data: unknown, seq = 0): Promise<ApplyOutcome> {
  const fact = readContactFact(data);
  return fact ? deps.projection.applyFact(fact, seq) : 'ignored';
}

/**
 * Applies DOMAIN events given in stream order, with the same result as applyContactEvent on each in
 * turn, in a few store calls. A malformed event gets its MalformedEventError as outcome (the others are
 * applied); store errors propagate, with nothing of the failing run written.
 */
export async function applyContactEvents(deps: ProjectContactsDeps, events: ReadonlyArray<{ data: unknown; seq: number }>): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = new Array(events.length);
  const facts: Array<{ fact: ContactFact; seq: number; i: number }> = [];
  events.forEach(({ data, seq }, i) => {
    try {
      const fact = readContactFact(data);
      if (fact) facts.push({ fact, seq, i });
      else outcomes[i] = 'ignored';
    } catch (err) {
      if (!(err instanceof MalformedEventError)) throw err;
      outcomes[i] = err;
    }
  });
  if (facts.length > 0) await deps.projection.applyFacts(facts, outcomes);
  return outcomes;
}
