import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import {
  automationOf,
  automationJson,
  automationRunPageJson,
  AutomationRunStatuses,
  automationToProto,
} from '../mapping/automations';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// Automations (messaging service): one operation per row of the API contract's table.

export const automationOperations: Operation[] = [
  operation('get', '/automations', 'listAutomations', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.automations.listAutomations({ accountId }, call)).items.map(automationJson) }),
  ),

  operation('post', '/automations', 'createAutomation', async ({ clients, accountId, body, call }) => {
    const automation = automationOf(await clients.automations.createAutomation({ accountId, automation: automationToProto(body) }, call));
    return created(automation, `/automations/${automation.id}`);
  }),

  operation('get', '/automations/:automationId', 'getAutomation', async ({ clients, accountId, params, call }) =>
    ok(automationOf(await clients.automations.getAutomation({ accountId, automationId: params.automationId }, call))),
  ),

  operation('put', '/automations/:automationId', 'updateAutomation', async ({ clients, accountId, params, body, call }) =>
    ok(automationOf(await clients.automations.updateAutomation({ accountId, automationId: params.automationId, automation: automationToProto(body) }, call))),
  ),

  operation('delete', '/automations/:automationId', 'deleteAutomation', async ({ clients, accountId, params, call }) => {
    await clients.automations.deleteAutomation({ accountId, automationId: params.automationId }, call);
    return noContent();
  }),

  operation('get', '/automations/:automationId/runs', 'listAutomationRuns', async ({ clients, accountId, params, query, call }) =>
    ok(
      automationRunPageJson(
        await clients.automations.listAutomationRuns(
          { accountId, automationId: params.automationId, pageNumber: query.pageNumber, pageSize: query.pageSize, status: AutomationRunStatuses.toProtoOrUnspecified(query.status) },
          call,
        ),
      ),
    ),
  ),
];

export const automationRoutes = (clients: ServiceClients): Router => mount(automationOperations, clients);
