import { sendingDomainJson } from '../mapping/sending-domains';
import { created, noContent, ok, operation, type Operation } from './operation';

// Sending domains (messaging service): one operation per row of the contract's table. A domain in a
// path is passed as given; the service canonicalises it (case, punycode) before looking it up.

export const sendingDomainOperations: Operation[] = [
  operation('get', '/sending-domains', 'listSendingDomains', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.sendingDomains.listSendingDomains({ accountId }, call)).items.map(sendingDomainJson) }),
  ),
  operation('post', '/sending-domains', 'createSendingDomain', async ({ clients, accountId, body, call }) => {
    const domain = sendingDomainJson((await clients.sendingDomains.createSendingDomain({ accountId, domain: body.domain }, call)).sendingDomain);
    return created(domain, `/sending-domains/${encodeURIComponent(domain.domain)}`);
  }),
  operation('get', '/sending-domains/:domain', 'getSendingDomain', async ({ clients, accountId, params, call }) =>
    ok(sendingDomainJson((await clients.sendingDomains.getSendingDomain({ accountId, domain: params.domain }, call)).sendingDomain)),
  ),
  operation('delete', '/sending-domains/:domain', 'deleteSendingDomain', async ({ clients, accountId, params, call }) => {
    await clients.sendingDomains.deleteSendingDomain({ accountId, domain: params.domain }, call);
    return noContent();
  }),
  operation('post', '/sending-domains/:domain/verify', 'verifySendingDomain', async ({ clients, accountId, params, call }) =>
    ok(sendingDomainJson((await clients.sendingDomains.verifySendingDomain({ accountId, domain: params.domain }, call)).sendingDomain)),
  ),
];
