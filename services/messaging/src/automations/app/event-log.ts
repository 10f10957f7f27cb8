// Reading the event log back (GET /events): one page, newest first, optionally of one event key or
// one address (canonicalised like the stored addresses).
import { invalid } from '@mailer/kit';
import type { Collection } from '@mailer/store';
import { eventsOf, type EventDoc, type EventQuery } from '../store/events';

export interface EventLogDeps {
  events: Collection<EventDoc>;
}

/**
 * The most `properties` one page may carry, in bytes of JSON. An event may hold up to about 1 MiB of
 * them, and one answer has to fit the 16 MiB gRPC message limit (then be written as JSON by the
 * gateway): a page of big events is refused with a hint rather than failing on the way.
 */
export const MAX_PAGE_PROPERTIES_BYTES = 8 * 1024 * 1024;

export async function listEvents(deps: EventLogDeps, accountId: string, query: EventQuery): Promise<{ items: EventDoc[]; totalItems: number }> {
  const email = query.email === undefined ? undefined : query.email.trim().toLowerCase();
  const page = await eventsOf(deps.events, accountId).list({ ...query, email });
  const bytes = page.items.reduce((sum, e) => sum + Buffer.byteLength(e.propertiesJson), 0);
  if (bytes > MAX_PAGE_PROPERTIES_BYTES) {
    const fits = Math.max(1, Math.floor((page.items.length * MAX_PAGE_PROPERTIES_BYTES) / bytes));
    throw invalid('events_page_too_large', `The events of this page hold ${bytes} bytes of properties, more than one answer carries (${MAX_PAGE_PROPERTIES_BYTES}); ask for fewer per page (pageSize ${fits} or less).`, [
      { path: 'query.pageSize', problem: `too many large events for one page; try ${fits} or less` },
    ]);
  }
  return page;
}
