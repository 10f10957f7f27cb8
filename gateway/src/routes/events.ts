import { Router } from 'express';
import { ApiError, StoreUnavailable } from '../errors';
import { eventIdFor } from '../events/event-id';
import type { AcceptedEventKeys, CustomEvent, EventSink } from '../events/publisher';
import { validated } from './validated';

const encoder = new TextEncoder();

/** How far in the future occurredAt may lie (client clocks drift). */
export const MAX_FUTURE_MS = 5 * 60_000;

/**
 * POST /events: the event is validated, stored on the EVENTS stream (subject events.<accountId>)
 * and only then acknowledged with 202. The messaging service consumes it from there.
 */
export function eventRoutes(deps: { sink: EventSink; acceptedKeys: AcceptedEventKeys; now?: () => Date }): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());

  router.post('/events', async (req, res) => {
    const { body } = validated('sendCustomEvent', req);
    const accountId = req.account!.accountId;
    const receivedAt = now();

    const occurredAt = body.occurredAt === undefined ? receivedAt : new Date(body.occurredAt);
    if (occurredAt.getTime() > receivedAt.getTime() + MAX_FUTURE_MS) {
      throw new ApiError(400, 'validation_failed', 'body.occurredAt may not be more than 5 minutes in the future.', [
        { path: 'body.occurredAt', problem: 'is more than 5 minutes in the future' },
      ]);
    }

    if (body.consent && new Date(body.consent.givenAt).getTime() > receivedAt.getTime() + MAX_FUTURE_MS) {
      throw new ApiError(400, 'validation_failed', 'body.consent.givenAt may not be more than 5 minutes in the future.', [
        { path: 'body.consent.givenAt', problem: 'is more than 5 minutes in the future' },
      ]);
    }

    const eventId = eventIdFor(accountId, body.idempotencyKey);
    if (body.idempotencyKey !== undefined) {
      const accepted = await deps.acceptedKeys.find(accountId, body.idempotencyKey);
      if (accepted) {
        res.status(202).json({ eventId: accepted, duplicate: true });
        return;
      }
    }

    const event: CustomEvent = {
      eventId,
      accountId,
      eventKey: body.eventKey,
      email: body.email.toLowerCase(),
      occurredAt: occurredAt.toISOString(),
      receivedAt: receivedAt.toISOString(),
      triggerAutomations: body.triggerAutomations,
      properties: body.properties ?? {},
      consent: body.consent ? { source: body.consent.source, givenAt: new Date(body.consent.givenAt).toISOString() } : null,
    };
    // A 1 MiB body can still make an event larger than the stream accepts (NATS max_payload).
    const data = encoder.encode(JSON.stringify(event));
    if (data.length > deps.sink.maxEventBytes()) {
      throw new ApiError(413, 'payload_too_large', `The event is too large to store (${data.length} bytes encoded; the limit is ${deps.sink.maxEventBytes()}).`);
    }
    let duplicate: boolean;
    try {
      ({ duplicate } = await deps.sink.publish(event, data));
    } catch (err) {
      throw new StoreUnavailable('publish custom event', err);
    }
    if (body.idempotencyKey !== undefined) {
      await deps.acceptedKeys.remember(accountId, body.idempotencyKey, eventId, event.receivedAt);
    }
    res.status(202).json({ eventId, duplicate });
  });

  return router;
}
