import { protoEnum } from '@mailer/kit';
import { eventsV1 } from '@mailer/proto';
import { numberFormatter, type ApiNumber, type ReportBuckets } from '@mailer/reports';
import type { QueryOf } from '../openapi/types';
import { int64 } from './numbers';

// The event log (GET /events): query -> EventService request, recorded events -> API items.

export const EventOutcomes = protoEnum(eventsV1.EventOutcome, 'EVENT_OUTCOME_');

export function listEventsToProto(accountId: string, q: QueryOf<'listEvents'>): eventsV1.ListEventsRequest {
  return { accountId, pageNumber: q.pageNumber, pageSize: q.pageSize, eventKey: q.eventKey, email: q.email };
}

/** A recorded event as the API contract's GET /events item; `properties` as sent. */
export function recordedEventJson(e: eventsV1.RecordedEvent) {
  return {
    eventId: e.eventId,
    eventKey: e.eventKey,
    email: e.email,
    occurredAt: e.occurredAt,
    receivedAt: e.receivedAt,
    properties: e.propertiesJson ? (JSON.parse(e.propertiesJson) as unknown) : {},
    triggerAutomations: e.triggerAutomations,
    subscriberId: e.subscriberId ?? null,
    outcome: EventOutcomes.fromProto(e.outcome),
    runIds: e.runIds,
    consentDecision: e.consentDecision ?? null,
  };
}

export function eventPageJson(page: eventsV1.ListEventsResponse) {
  return { items: page.items.map(recordedEventJson), pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: int64(page.totalItems), totalPages: page.totalPages };
}

/**
 * The event report's points (POST /reports/events): one per bucket, `received` and `byEventKey`
 * (only the keys received in that bucket) as Numbers in the request's Accept-Language. A service
 * answering another number of buckets is a bug (500).
 */
export function eventReportJson(buckets: ReportBuckets, counts: eventsV1.EventCounts[], acceptLanguage: string | string[] | undefined) {
  if (counts.length !== buckets.periodStarts.length) throw new Error(`the service answered ${counts.length} buckets for ${buckets.periodStarts.length}`);
  const format = numberFormatter(Array.isArray(acceptLanguage) ? acceptLanguage.join(',') : acceptLanguage);
  return {
    points: buckets.periodStarts.map((periodStart, i) => {
      const byEventKey: Record<string, ApiNumber> = {};
      for (const k of counts[i].byEventKey) byEventKey[k.eventKey] = format(int64(k.count));
      return { periodStart, received: format(int64(counts[i].received)), byEventKey };
    }),
  };
}
