import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import {
  batchResultsJson,
  emailMessageOf,
  emailMessagePageJson,
  EmailMessageStatuses,
  listEmailMessagesToProto,
  sendEmailMessagesToProto,
  sendEmailMessageToProto,
} from '../mapping/email-messages';
import { accepted, mount, ok, operation, type Operation } from './operation';

// Transactional email (messaging service): one operation per row of the API contract's table.

export const emailMessageOperations: Operation[] = [
  operation('post', '/email-messages', 'sendEmailMessage', async ({ clients, accountId, body, call }) => {
    const res = await clients.emailMessages.sendEmailMessage(sendEmailMessageToProto(accountId, body), call);
    return accepted({ messageId: res.messageId, status: EmailMessageStatuses.fromProto(res.status) });
  }),

  // Before /email-messages/:messageId: a literal path is matched first (mount()).
  operation('post', '/email-messages/batch', 'sendEmailMessages', async ({ clients, accountId, body, itemErrors, call }) => {
    const { request, indexes, refused } = sendEmailMessagesToProto(accountId, body, itemErrors);
    const response = request.messages.length ? await clients.emailMessages.sendEmailMessages(request, call) : undefined;
    return ok(batchResultsJson(response, indexes, refused));
  }),

  operation('get', '/email-messages', 'listEmailMessages', async ({ clients, accountId, query, call }) =>
    ok(emailMessagePageJson(await clients.emailMessages.listEmailMessages(listEmailMessagesToProto(accountId, query), call))),
  ),

  operation('get', '/email-messages/:messageId', 'getEmailMessage', async ({ clients, accountId, params, call }) =>
    ok(emailMessageOf(await clients.emailMessages.getEmailMessage({ accountId, messageId: params.messageId }, call))),
  ),
];

export const emailMessageRoutes = (clients: ServiceClients): Router => mount(emailMessageOperations, clients);
