import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { present } from '../mapping/numbers';
import { listSuppressionsToProto, suppressionJson, suppressionPageJson } from '../mapping/suppressions';
import { mount, noContent, ok, operation, type Operation } from './operation';

// The suppression list (messaging service): one operation per row of the API contract's table.

export const suppressionOperations: Operation[] = [
  operation('get', '/suppressions', 'listSuppressions', async ({ clients, accountId, query, call }) =>
    ok(suppressionPageJson(await clients.suppressions.listSuppressions(listSuppressionsToProto(accountId, query), call))),
  ),

  // 201 when the address was added; 200 with the existing entry (its first reason kept) when it was
  // suppressed already, so a retry is harmless and the caller still learns the reason.
  operation('post', '/suppressions', 'addSuppression', async ({ clients, accountId, body, call }) => {
    const { suppression, created } = await clients.suppressions.addSuppression({ accountId, email: body.email }, call);
    return { status: created ? 201 : 200, body: suppressionJson(present(suppression, 'the suppression')) };
  }),

  operation('delete', '/suppressions/:email', 'deleteSuppression', async ({ clients, accountId, params, call }) => {
    await clients.suppressions.deleteSuppression({ accountId, email: params.email }, call);
    return noContent();
  }),
];

export const suppressionRoutes = (clients: ServiceClients): Router => mount(suppressionOperations, clients);
