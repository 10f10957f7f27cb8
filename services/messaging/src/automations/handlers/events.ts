// mailer.messaging.v1.EventService: GET /events (the event log) and POST /reports/events, translated
// to the use cases (app/event-log.ts, app/event-reports.ts).
import { accountOf, type AsyncHandlers, pageAnswer, pageOf, protoEnum } from '@mailer/kit';
import { eventsV1 } from '@mailer/proto';
import { listEvents, type EventLogDeps } from '../app/event-log';
import { countEvents, type EventReportDeps } from '../app/event-reports';
import { boundaryInstants } from '../../mail/handlers/report-boundaries';
import type { EventDoc } from '../store/events';

const Outcomes = protoEnum(eventsV1.EventOutcome, 'EVENT_OUTCOME_');

export function eventToProto(e: EventDoc): eventsV1.RecordedEvent {
  return {
    eventId: e._id,
    eventKey: e.eventKey,
    email: e.email,
    occurredAt: new Date(e.occurredAt).toISOString(),
    receivedAt: new Date(e.receivedAt).toISOString(),
    propertiesJson: e.propertiesJson,
    triggerAutomations: e.triggerAutomations,
    subscriberId: e.subscriberId ?? undefined,
    outcome: Outcomes.toProto(e.outcome),
    runIds: e.runIds ?? [],
    consentDecision: e.consentDecision ?? undefined,
  };
}

export function eventHandlers(deps: EventLogDeps & EventReportDeps): AsyncHandlers<eventsV1.EventServiceServer> {
  return {
    async listEvents(req) {
      const { pageNumber, pageSize } = pageOf(req.pageNumber, req.pageSize);
      const { items, totalItems } = await listEvents(deps, accountOf(req), { eventKey: req.eventKey, email: req.email, pageNumber, pageSize });
      return { items: items.map(eventToProto), ...pageAnswer({ pageNumber, pageSize }, totalItems) };
    },
    async countEvents(req) {
      const buckets = await countEvents(deps, { accountId: accountOf(req), boundaries: boundaryInstants(req.boundaries ?? []) });
      return {
        buckets: buckets.map((b) => ({
          received: String(b.received),
          byEventKey: Object.entries(b.byEventKey).map(([eventKey, count]) => ({ eventKey, count: String(count) })),
        })),
      };
    },
  };
}
