import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { issueJson, issuePageJson, newsletterJson, newsletterToProto, previewJson } from '../mapping/rss';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// RSS newsletters (rss service): one operation per row of the API contract's "RSS newsletters" table.

type IssueTransition = 'releaseRssIssue' | 'discardRssIssue';

const issueTransition = (path: 'release' | 'discard', operationId: IssueTransition, rpc: IssueTransition) =>
  operation('post', `/rss-newsletters/:newsletterId/issues/:issueId/${path}`, operationId, async ({ clients, accountId, params, call }) =>
    ok(issueJson((await clients.rss[rpc]({ accountId, newsletterId: params.newsletterId, issueId: params.issueId }, call)).issue)),
  );

export const rssOperations: Operation[] = [
  operation('get', '/rss-newsletters', 'listRssNewsletters', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.rss.listRssNewsletters({ accountId }, call)).items.map(newsletterJson) }),
  ),
  operation('post', '/rss-newsletters', 'createRssNewsletter', async ({ clients, accountId, body, call }) => {
    const n = newsletterJson((await clients.rss.createRssNewsletter({ accountId, newsletter: newsletterToProto(body) }, call)).newsletter);
    return created(n, `/rss-newsletters/${n.id}`);
  }),
  operation('post', '/rss-newsletters/preview', 'previewRssFeed', async ({ clients, accountId, body, call }) =>
    ok(previewJson(await clients.rss.previewRssFeed({ accountId, url: body.url }, call))),
  ),
  operation('get', '/rss-newsletters/:newsletterId', 'getRssNewsletter', async ({ clients, accountId, params, call }) =>
    ok(newsletterJson((await clients.rss.getRssNewsletter({ accountId, newsletterId: params.newsletterId }, call)).newsletter)),
  ),
  operation('put', '/rss-newsletters/:newsletterId', 'updateRssNewsletter', async ({ clients, accountId, params, body, call }) =>
    ok(newsletterJson((await clients.rss.updateRssNewsletter({ accountId, newsletterId: params.newsletterId, newsletter: newsletterToProto(body) }, call)).newsletter)),
  ),
  operation('delete', '/rss-newsletters/:newsletterId', 'deleteRssNewsletter', async ({ clients, accountId, params, call }) => {
    await clients.rss.deleteRssNewsletter({ accountId, newsletterId: params.newsletterId }, call);
    return noContent();
  }),
  operation('post', '/rss-newsletters/:newsletterId/check', 'checkRssNewsletter', async ({ clients, accountId, params, call }) => {
    const r = await clients.rss.checkRssNewsletter({ accountId, newsletterId: params.newsletterId }, call);
    return ok({ newItems: r.newItems, issueId: r.issueId ?? null });
  }),
  operation('post', '/rss-newsletters/:newsletterId/pause', 'pauseRssNewsletter', async ({ clients, accountId, params, call }) =>
    ok(newsletterJson((await clients.rss.pauseRssNewsletter({ accountId, newsletterId: params.newsletterId }, call)).newsletter)),
  ),
  operation('post', '/rss-newsletters/:newsletterId/resume', 'resumeRssNewsletter', async ({ clients, accountId, params, body, call }) =>
    ok(newsletterJson((await clients.rss.resumeRssNewsletter({ accountId, newsletterId: params.newsletterId, rebaseline: body?.rebaseline ?? false }, call)).newsletter)),
  ),
  operation('get', '/rss-newsletters/:newsletterId/issues', 'listRssIssues', async ({ clients, accountId, params, query, call }) =>
    ok(issuePageJson(await clients.rss.listRssIssues({ accountId, newsletterId: params.newsletterId, pageNumber: query.pageNumber, pageSize: query.pageSize }, call))),
  ),
  issueTransition('release', 'releaseRssIssue', 'releaseRssIssue'),
  issueTransition('discard', 'discardRssIssue', 'discardRssIssue'),
];

export const rssRoutes = (clients: ServiceClients): Router => mount(rssOperations, clients);
