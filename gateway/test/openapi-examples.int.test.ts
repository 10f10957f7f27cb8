// Every request example of the OpenAPI document, sent as Swagger UI's "Try it out" sends it, works in
// a fresh account of the real system (the runner of `npm run up`, every service and the gateway):
// the examples run in an order where each resource is created before it is used, the placeholder ids
// the document declares (EXAMPLE_IDS, named in each operation's description) replaced by the ids the
// earlier calls answered, and each answer is a 2xx. "Example" means what "Try it out" prefills: the
// JSON body's example and the parameters' own examples (`example`, `examples`; a path parameter without
// one is typed by the user, here the id answered by the call that created it).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalSystem, type LocalSystem } from '@mailer/testing';
import { openApiDocument } from '../src/openapi/document';
import { EXAMPLE_FEED_URL, EXAMPLE_IDS, REQUEST_EXAMPLES } from '../src/openapi/examples';

interface Parameter {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header';
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

const components = openApiDocument.components.parameters as unknown as Record<string, Parameter>;
const operations = new Map(
  Object.entries(openApiDocument.paths as unknown as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [op.operationId, { method: method.toUpperCase(), path, op }] as const),
  ),
);
const parametersOf = (op: Operation) => (op.parameters ?? []).map((p) => (p.$ref ? components[p.$ref.split('/').pop()!] : p));
/** What "Try it out" prefills for a parameter: its example, or the first of its examples. */
const prefilled = (p: Parameter) => p.example ?? Object.values(p.examples ?? {})[0]?.value;
const bodyExample = (op: Operation) => op.requestBody?.content['application/json']?.example;

/**
 * The order the examples are tried in: creations before uses, and the state an example needs before
 * it (a newsletter is paused before it is resumed; the subscriber's address and status change last,
 * as examples after them name Ann by her address). Steps without an example of their own (the pause)
 * are sent without a body.
 */
const STEPS = [
  'createEmailTemplate', 'updateEmailTemplate', 'renderEmailTemplate',
  'addTag', 'renameTag', 'addTopic', 'updateTopic', 'addField', 'updateField',
  'addSubscriber', 'getSubscriberByEmail', 'syncSubscribers', 'addTagsToSubscribers', 'removeTagsFromSubscribers',
  'replaceSubscriberData', 'replaceSubscriberFirstName', 'replaceSubscriberTopics', 'optOutOfTopic', 'setFieldValue',
  'createPurchaseSource', 'ingestPurchaseOrders', 'setPurchaseBaseline',
  'createSegment', 'updateSegment', 'previewSegmentExpression',
  'createSenderProfile', 'updateSenderProfile', 'createSendingDomain', 'sendEmailMessage', 'sendEmailMessages',
  'createBroadcast', 'updateBroadcast', 'sendBroadcastTest', 'scheduleBroadcast', 'resendToNonOpeners',
  'createAutomation', 'updateAutomation', 'sendCustomEvent',
  'createForm', 'updateForm',
  'createWebhookSubscription', 'updateWebhookSubscription',
  'previewRssFeed', 'createRssNewsletter', 'updateRssNewsletter', 'pauseRssNewsletter', 'resumeRssNewsletter',
  'addSuppression', 'deleteSuppression',
  'reportSubscribers', 'reportEmails', 'reportEvents',
  'replaceSubscriberEmail', 'replaceSubscriberStatus',
];
/** Path parameters no body example names: the call whose answer gives them, and where. */
const PATH_IDS: Record<string, { from: string; answer: string }> = {
  formId: { from: 'createForm', answer: 'id' },
  subscriptionId: { from: 'createWebhookSubscription', answer: 'id' },
  newsletterId: { from: 'createRssNewsletter', answer: 'id' },
  automationId: { from: 'createAutomation', answer: 'id' },
  name: { from: 'createEmailTemplate', answer: 'name' },
  broadcastId: { from: 'createBroadcast', answer: 'id' },
};

/** Before these steps, what a reader of the example waits for: the state the step needs. */
const AWAIT: Record<string, (ids: Record<string, string>) => Promise<void>> = {
  // Non-openers of a broadcast exist once it is SENT (scheduleBroadcast's example sends now).
  resendToNonOpeners: async (ids) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(`${system.url}/broadcasts/${ids.broadcastId}`, { headers: { 'x-api-key': system.apiKey } });
      const status = res.ok ? ((await res.json()) as { status: string }).status : `HTTP ${res.status}`;
      if (status === 'SENT') return;
      if (Date.now() > deadline) throw new Error(`the broadcast is still ${status} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  },
};

const member = (value: unknown, at: string): unknown => at.split(/[.[\]]+/).filter(Boolean).reduce<any>((v, k) => v?.[k], value); // eslint-disable-line @typescript-eslint/no-explicit-any

let system: LocalSystem;
let feed: http.Server;
let feedUrl: string;

beforeAll(async () => {
  // The customer's feed that EXAMPLE_FEED_URL stands for.
  feed = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rss+xml' });
    res.end('<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title><link>https://blog.example.com/</link><item><guid>p1</guid><title>Hello</title><link>https://blog.example.com/1</link></item></channel></rss>');
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/feed.xml`;
  system = await startLocalSystem();
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await new Promise((resolve) => feed?.close(resolve));
}, 60_000);

it('lists every operation with an example among the steps, each after the calls its ids come from', () => {
  const withExamples = [...operations.values()]
    .filter(({ op }) => op.security?.length !== 0 && (bodyExample(op) !== undefined || parametersOf(op).some((p) => prefilled(p) !== undefined)))
    .map(({ op }) => op.operationId);
  expect(withExamples.filter((id) => !STEPS.includes(id))).toEqual([]);
  expect(Object.keys(REQUEST_EXAMPLES).filter((id) => !STEPS.includes(id))).toEqual([]);
  for (const { from } of [...Object.values(EXAMPLE_IDS), ...Object.values(PATH_IDS)]) expect(STEPS).toContain(from);
});

it('every request example answers 2xx in a fresh account, tried in that order', async () => {
  const ids: Record<string, string> = {};
  const answers: string[] = [];
  for (const step of STEPS) {
    const { method, path, op } = operations.get(step)!;
    await AWAIT[step]?.(ids);
    let url = path;
    const headers: Record<string, string> = { 'x-api-key': system.apiKey };
    const query = new URLSearchParams();
    const missing: string[] = [];
    for (const p of parametersOf(op)) {
      const value = prefilled(p) ?? (p.in === 'path' ? ids[p.name] : undefined);
      if (value === undefined) {
        if (p.in === 'path') missing.push(p.name);
      } else if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value))); // as Swagger UI encodes
      else if (p.in === 'query') query.set(p.name, String(value));
      else headers[p.name.toLowerCase()] = String(value);
    }
    let body: string | undefined;
    const example = bodyExample(op);
    if (example !== undefined) {
      body = JSON.stringify(example).replaceAll(EXAMPLE_FEED_URL, feedUrl);
      for (const [name, { placeholder }] of Object.entries(EXAMPLE_IDS)) {
        if (!body.includes(placeholder)) continue;
        if (ids[name]) body = body.replaceAll(placeholder, ids[name]);
        else missing.push(name);
      }
      headers['content-type'] = 'application/json';
    }
    if (missing.length) {
      answers.push(`${step} not sent: no ${missing.join(', ')} answered before it`);
      continue;
    }
    const res = await fetch(`${system.url}${url}${query.size ? `?${query}` : ''}`, { method, headers, body });
    const text = await res.text();
    answers.push(`${step} ${res.status}${res.ok ? '' : ` ${text}`}`);
    if (!res.ok) continue;
    const answer = text ? JSON.parse(text) : undefined;
    for (const [name, { from, answer: at }] of [...Object.entries(EXAMPLE_IDS), ...Object.entries(PATH_IDS)]) {
      if (from === step) ids[name] = String(member(answer, at));
    }
  }
  expect(answers.filter((a) => !/^\S+ 2\d\d$/.test(a))).toEqual([]);
  expect(answers).toHaveLength(STEPS.length);
}, 120_000);
