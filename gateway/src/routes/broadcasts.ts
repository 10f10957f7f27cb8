import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { broadcastJson, broadcastPageJson, broadcastToProto, BroadcastStatuses, recipientPageJson, RecipientStatuses } from '../mapping/broadcasts';
import { accepted, created, mount, noContent, ok, operation, type Operation } from './operation';

// Broadcasts (messaging service): one route per operation of the OpenAPI document's "Broadcasts" tag.

const located = (json: ReturnType<typeof broadcastJson>) => created(json, `/broadcasts/${json.id}`);

export const broadcastOperations: Operation[] = [
  operation('get', '/broadcasts', 'listBroadcasts', async ({ clients, accountId, query, call }) =>
    ok(broadcastPageJson(await clients.broadcasts.listBroadcasts({ accountId, status: BroadcastStatuses.toProtoOrUnspecified(query.status), pageNumber: query.pageNumber, pageSize: query.pageSize }, call))),
  ),
  operation('post', '/broadcasts', 'createBroadcast', async ({ clients, accountId, body, call }) =>
    located(broadcastJson(await clients.broadcasts.createBroadcast({ accountId, broadcast: broadcastToProto(body) }, call))),
  ),
  operation('get', '/broadcasts/:broadcastId', 'getBroadcast', async ({ clients, accountId, params, call }) =>
    ok(broadcastJson(await clients.broadcasts.getBroadcast({ accountId, broadcastId: params.broadcastId }, call))),
  ),
  operation('put', '/broadcasts/:broadcastId', 'updateBroadcast', async ({ clients, accountId, params, body, call }) =>
    ok(broadcastJson(await clients.broadcasts.updateBroadcast({ accountId, broadcastId: params.broadcastId, broadcast: broadcastToProto(body) }, call))),
  ),
  operation('delete', '/broadcasts/:broadcastId', 'deleteBroadcast', async ({ clients, accountId, params, call }) => {
    await clients.broadcasts.deleteBroadcast({ accountId, broadcastId: params.broadcastId }, call);
    return noContent();
  }),
  operation('post', '/broadcasts/:broadcastId/schedule', 'scheduleBroadcast', async ({ clients, accountId, params, body, call }) =>
    ok(broadcastJson(await clients.broadcasts.scheduleBroadcast({ accountId, broadcastId: params.broadcastId, sendAt: body?.sendAt }, call))),
  ),
  operation('post', '/broadcasts/:broadcastId/cancel', 'cancelBroadcast', async ({ clients, accountId, params, call }) =>
    ok(broadcastJson(await clients.broadcasts.cancelBroadcast({ accountId, broadcastId: params.broadcastId }, call))),
  ),
  operation('post', '/broadcasts/:broadcastId/test', 'sendBroadcastTest', async ({ clients, accountId, params, body, call }) =>
    accepted({ messageIds: (await clients.broadcasts.sendBroadcastTest({ accountId, broadcastId: params.broadcastId, emails: body.emails }, call)).messageIds }),
  ),
  operation('get', '/broadcasts/:broadcastId/recipients', 'listBroadcastRecipients', async ({ clients, accountId, params, query, call }) =>
    ok(recipientPageJson(await clients.broadcasts.listBroadcastRecipients({
      accountId,
      broadcastId: params.broadcastId,
      status: RecipientStatuses.toProtoOrUnspecified(query.status),
      variant: query.variant,
      pageNumber: query.pageNumber,
      pageSize: query.pageSize,
    }, call))),
  ),
  operation('post', '/broadcasts/:broadcastId/resend-to-non-openers', 'resendToNonOpeners', async ({ clients, accountId, params, body, call }) =>
    located(broadcastJson(await clients.broadcasts.resendToNonOpeners({ accountId, broadcastId: params.broadcastId, subject: body?.subject, sendAt: body?.sendAt }, call))),
  ),
];

export const broadcastRoutes = (clients: ServiceClients): Router => mount(broadcastOperations, clients);
