// Reading the event log back (GET /events): one page, newest first, optionally of one event key or
// one address (canonicalised like the stored addresses).
import { eventsOf, type EventDoc, type EventQuery } from '../store/events';
import type { Collection } from '@mailer/store';

export interface EventLogDeps {
  events: Collection<EventDoc>;
}

export async function listEvents(deps: EventLogDeps, accountId: string, query: EventQuery): Promise<{ items: EventDoc[]; totalItems: number }> {
  const email = query.email === undefined ? undefined : query.email.trim().toLowerCase();
  return eventsOf(deps.events, accountId).list({ ...query, email });
}
