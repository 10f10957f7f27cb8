import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { eventPageJson, listEventsToProto } from '../mapping/events';
import { mount, ok, operation, type Operation } from './operation';

// The event log (messaging service): what the events consumer recorded. POST /events, which stores an
// event on the EVENTS stream, is routes/events.ts.

export const eventLogOperations: Operation[] = [
  operation('get', '/events', 'listEvents', async ({ clients, accountId, query, call }) =>
    ok(eventPageJson(await clients.events.listEvents(listEventsToProto(accountId, query), call))),
  ),
];

export const eventLogRoutes = (clients: ServiceClients): Router => mount(eventLogOperations, clients);
