// Helpers of the broadcast tests: the mail stack with a capture relay (startRssStack: subscriber,
// segment, form, messaging with its delivery worker, rss, gateway), an account's catalog, readers,
// and reads of a broadcast until a condition holds.
import { startCaptureRelay, type CaptureRelay, type CapturedMail } from '@mailer/testing';
import { schemaErrors } from '../../src/openapi/validator';
import { startRssStack, type RssStack } from './rss-stack';
import { expectStatus, type Api } from './subscriber-stack';

export const PUBLIC_BASE = 'https://mail.rss.test';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BroadcastStack {
  env: RssStack;
  relay: CaptureRelay;
  stop(): Promise<void>;
}

export async function startBroadcastStack(messagingEnv: NodeJS.ProcessEnv = {}): Promise<BroadcastStack> {
  const relay = await startCaptureRelay();
  const env = await startRssStack({
    messagingEnv: {
      SMTP_URL: relay.url,
      MAIL_SEND_PAUSED: 'false',
      MAIL_ACCOUNT_RATE_PER_SECOND: '100000',
      MAIL_SEND_CONCURRENCY: '50',
      BROADCAST_SEND_LEASE_SECONDS: '3',
      BROADCAST_SEND_RETRY_SECONDS: '1',
      ...messagingEnv,
    },
  });
  return {
    env,
    relay,
    async stop() {
      await env.stop();
      await relay.close();
    },
  };
}

/** An account with a sender profile, a topic and a template (its html has a link and no unsubscribe link: the footer is added). */
export async function broadcastAccount(env: RssStack, name: string) {
  const a = await env.account(name);
  const profile = expectStatus(await a.post('/sender-profiles', { name: 'News', fromEmail: 'news@example.com', fromName: 'The News' }), 201);
  const topic = expectStatus(await a.post('/topics', { label: 'News' }), 201);
  expectStatus(await a.post('/email-templates', { name: 'spring', subject: 'Spring for {{ subscriber.firstName | default: "you" }}', html: '<p>Hi {{ subscriber.firstName }}</p><a href="https://shop.example/spring">Shop spring</a>' }), 201);
  return { a, profileId: profile.id as string, topicId: topic.id as string };
}

/** Adds subscribers in bulk (1,000 per sync). */
export async function addReaders(a: Api, readers: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < readers.length; i += 1000) {
    const res = expectStatus(await a.post('/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: readers.slice(i, i + 1000) }), 200);
    expect(res.results.filter((r: { outcome: string }) => r.outcome !== 'CREATED')).toEqual([]);
  }
}

/** The broadcast, checked against its OpenAPI schema and against both reconciliation equations. */
export async function getBroadcast(a: Api, id: string) {
  const b = expectStatus(await a.get(`/broadcasts/${id}`), 200);
  expect(schemaErrors('Broadcast', b)).toEqual([]);
  expectBalanced(b.reconciliation);
  return b;
}

export function expectBalanced(r: Record<string, number> & { excluded: Record<string, number> }): void {
  const excluded = Object.values(r.excluded).reduce((x, y) => x + y, 0);
  const statuses = r.pending + r.sent + r.delivered + r.deferred + r.failed + r.bounced + r.suppressed;
  expect({ audience: r.audience, recipientsAndExcluded: r.recipients + excluded, recipients: r.recipients, statuses }).toEqual({ audience: r.audience, recipientsAndExcluded: r.audience, recipients: r.recipients, statuses: r.recipients });
}

/** Polls the broadcast until `done` holds (every read checked as getBroadcast does). */
export async function broadcastWhen(a: Api, id: string, done: (b: any) => boolean, timeoutMs = 60_000) { // eslint-disable-line @typescript-eslint/no-explicit-any
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const b = await getBroadcast(a, id);
    if (done(b)) return b;
    if (Date.now() > deadline) throw new Error(`broadcast never reached the condition; last: ${JSON.stringify(b)}`);
    await sleep(200);
  }
}

/** Every reader of the broadcast (all pages). */
export async function recipientsOf(a: Api, id: string, query = '') {
  const items: Array<{ subscriberId: string; email: string; status: string; variant: number | null; messageId: string | null; reason: string | null }> = [];
  for (let page = 1; ; page++) {
    const res = expectStatus(await a.get(`/broadcasts/${id}/recipients?pageSize=1000&pageNumber=${page}${query}`), 200);
    expect(schemaErrors('PaginatedBroadcastRecipients', res)).toEqual([]);
    items.push(...res.items);
    if (page >= res.totalPages) return items;
  }
}

/** The tracking links of a captured mail, pointed at the gateway (mail links carry PUBLIC_BASE_URL). */
export function trackingLinks(mail: CapturedMail, gatewayUrl: string): { open: string; clicks: string[] } {
  const html = mail.html ?? '';
  const at = (path: string) => [...html.matchAll(new RegExp(`${PUBLIC_BASE}(/t/${path}/[A-Za-z0-9_-]+)`, 'g'))].map((m) => `${gatewayUrl}${m[1]}`);
  return { open: at('o')[0], clicks: at('c') };
}

/** The last fact of a type on DOMAIN (read in place: no consumer is created). */
export async function lastFact(env: RssStack, type: string): Promise<Record<string, unknown>> {
  const jsm = await env.stack.nc.jetstreamManager();
  return (await jsm.streams.getMessage('DOMAIN', { last_by_subj: `domain.${type}` })).json<Record<string, unknown>>();
}
