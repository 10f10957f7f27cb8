import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { issueJson, issuePageJson, newsletterJson, newsletterToProto, previewJson, type RssNewsletterBody } from '../mapping/rss';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// RSS newsletters (rss service): one operation per row of the API contract's "RSS newsletters" table.

type ByNewsletter = { newsletterId: string };
type ByIssue = ByNewsletter & { issueId: string };

const issueTransition = (path: 'release' | 'discard', operationId: string, rpc: 'releaseRssIssue' | 'discardRssIssue') =>
  operation<never, never, ByIssue>('post', `/rss-newsletters/:newsletterId/issues/:issueId/${path}`, operationId, async ({ clients, accountId, params, call }) =>
    ok(issueJson((await clients.rss[rpc]({ accountId, newsletterId: params.newsletterId, issueId: params.issueId }, call)).issue)),
  );

export const rssOperations: Operation[] = [
  operation('get', '/rss-newsletters', 'listRssNewsletters', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.rss.listRssNewsletters({ accountId }, call)).items.map(newsletterJson) }),
  ),
  operation<RssNewsletterBody>('post', '/rss-newsletters', 'createRssNewsletter', async ({ clients, accountId, body, call }) => {
    const n = newsletterJson((await clients.rss.createRssNewsletter({ accountId, newsletter: newsletterToProto(body) }, call)).newsletter);
    return created(n, `/rss-newsletters/${n.id}`);
  }),
  operation<{ url: string }>('post', '/rss-newsletters/preview', 'previewRssFeed', async ({ clients, accountId, body, call }) =>
    ok(previewJson(await clients.rss.previewRssFeed({ accountId, url: body.url }, call))),
  ),
  operation<never, never, ByNewsletter>('get', '/rss-newsletters/:newsletterId', 'getRssNewsletter', async ({ clients, accountId, params, call }) =>
    ok(newsletterJson((await clients.rss.getRssNewsletter({ accountId, newsletterId: params.newsletterId }, call)).newsletter)),
  ),
  operation<RssNewsletterBody, never, ByNewsletter>('put', '/rss-newsletters/:newsletterId', 'updateRssNewsletter', async ({ clients, accountId, params, body, call }) =>
    ok(newsletterJson((await clients.rss.updateRssNewsletter({ accountId, newsletterId: params.newsletterId, newsletter: newsletterToProto(body) }, call)).newsletter)),
  ),
  operation<never, never, ByNewsletter>('delete', '/rss-newsletters/:newsletterId', 'deleteRssNewsletter', async ({ clients, accountId, params, call }) => {
    await clients.rss.deleteRssNewsletter({ accountId, newsletterId: params.newsletterId }, call);
    return noContent();
  }),
  operation<never, never, ByNewsletter>('post', '/rss-newsletters/:newsletterId/check', 'checkRssNewsletter', async ({ clients, accountId, params, call }) => {
    const r = await clients.rss.checkRssNewsletter({ accountId, newsletterId: params.newsletterId }, call);
    return ok({ newItems: r.newItems, issueId: r.issueId ?? null });
  }),
  operation<never, never, ByNewsletter>('post', '/rss-newsletters/:newsletterId/pause', 'pauseRssNewsletter', async ({ clients, accountId, params, call }) =>
    ok(newsletterJson((await clients.rss.pauseRssNewsletter({ accountId, newsletterId: params.newsletterId }, call)).newsletter)),
  ),
  operation<{ rebaseline?: boolean } | undefined, never, ByNewsletter>('post', '/rss-newsletters/:newsletterId/resume', 'resumeRssNewsletter', async ({ clients, accountId, params, body, call }) =>
    ok(newsletterJson((await clients.rss.resumeRssNewsletter({ accountId, newsletterId: params.newsletterId, rebaseline: body?.rebaseline ?? false }, call)).newsletter)),
  ),
  operation<never, { pageNumber: number; pageSize: number }, ByNewsletter>('get', '/rss-newsletters/:newsletterId/issues', 'listRssIssues', async ({ clients, accountId, params, query, call }) =>
    ok(issuePageJson(await clients.rss.listRssIssues({ accountId, newsletterId: params.newsletterId, pageNumber: query.pageNumber, pageSize: query.pageSize }, call))),
  ),
  issueTransition('release', 'releaseRssIssue', 'releaseRssIssue'),
  issueTransition('discard', 'discardRssIssue', 'discardRssIssue'),
];

export const rssRoutes = (clients: ServiceClients): Router => mount(rssOperations, clients);
