import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startService, type RunningService } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { adminRequest, createAccount, readEvents, startGateway, startStack, type Stack } from './support/harness';
import { MAX_JSON_DEPTH } from '../src/middleware/json-scan';

// Generated bad (and some good) requests against a real gateway: never a 5xx other than a
// documented 503, always an ErrorMessageDto on errors, and the process keeps answering.

const SEED = Number(process.env.FUZZ_SEED ?? 20240611);
const CASES = Number(process.env.FUZZ_CASES ?? 600);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
const chance = (p: number) => random() < p;

const WEIRD_STRINGS = ['', ' ', 'null', '0', '-1', '1e309', '9'.repeat(40), '%', '%%', '%zz', '%00', '\u0000', 'ü', '😀', '<script>', "' OR 1=1 --", '../../etc/passwd', 'a'.repeat(5000), '__proto__', 'constructor', '{"a":1}', 'true'];
const ID = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';
const KNOWN_PATHS = [
  '/events', '/subscribers', `/subscribers/${ID}`, '/account/api-key', '/account/api-key/rotate', '/healthz', '/readyz', '/openapi.json',
  // the subscriber domain
  '/subscribers/sync', '/subscribers/by-email/ann%40example.org', '/subscribers/tags/add', '/subscribers/tags/remove',
  `/subscribers/${ID}/data`, `/subscribers/${ID}/email`, `/subscribers/${ID}/first-name`, `/subscribers/${ID}/status`, `/subscribers/${ID}/topics`,
  `/subscribers/${ID}/topics/${ID}/opt-out`, `/subscribers/${ID}/field-values`, `/subscribers/${ID}/field-values/${ID}`,
  '/fields', `/fields/${ID}`, '/fields/EMAIL', `/fields/${ID}/archive`, `/fields/${ID}/restore`, `/fields/${ID}/usage`, `/fields/${ID}/forms`,
  '/tags', `/tags/${ID}`, '/topics', `/topics/${ID}`,
  // the segment domain
  '/segments', '/segments/preview', `/segments/${ID}`, `/segments/${ID}/count`, `/segments/${ID}/subscribers`, `/segments/${ID}/preview`,
  '/purchase-sources', `/purchase-sources/${ID}/orders`, `/purchase-sources/${ID}/baseline`,
  // webhooks
  '/webhook-events', '/webhook-subscriptions', `/webhook-subscriptions/${ID}`, `/webhook-subscriptions/${ID}/rotate-secret`, `/webhook-subscriptions/${ID}/deliveries`,
  `/webhook-subscriptions/${ID}/deliveries/${ID}/redeliver`, `/webhook-subscriptions/${ID}/test`,
];

function randomString(): string {
  if (chance(0.4)) return pick(WEIRD_STRINGS);
  const alphabet = 'abcXYZ019 ._-:/?#[]@!$&\'()*+,;=%"\\<>{}|^`~\u00e9\u4e2d';
  return Array.from({ length: int(30) }, () => alphabet[int(alphabet.length)]).join('');
}

function randomJson(depth = 0): unknown {
  switch (int(depth > 4 ? 5 : 8)) {
    case 0: return randomString();
    case 1: return pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 123456789012345678901234567890, 2 ** 31, -(2 ** 31) - 1, 1e-320]);
    case 2: return chance(0.5);
    case 3: return null;
    case 4: return pick(['order.paid', 'ann@example.org', '2024-01-01T00:00:00Z', '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', 'ACTIVE']);
    case 5: return Array.from({ length: int(5) }, () => randomJson(depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      const keys = [
        'eventKey', 'email', 'occurredAt', 'idempotencyKey', 'triggerAutomations', 'properties', 'consent', 'firstName', 'subscriberStatus', 'fields', 'tags', '__proto__', 'constructor', randomString(),
        'topicIds', 'subscriberIds', 'tagIds', 'subscribers', 'mode', 'kind', 'text', 'number', 'date', 'booleanValue', 'optionId', 'optionIds', 'fieldId', 'value',
        'label', 'name', 'fieldType', 'personalizationTagName', 'options', 'required', 'internal', 'position', 'description', 'active', 'isDefault', 'overrideOptOuts', 'source',
        'expression', 'conditionGroups', 'conditions', 'subjectType', 'operator', 'operand', 'purchase', 'period', 'days', 'count', 'amount', 'orders', 'timeZone', 'complete',
      ];
      for (let i = 0; i < int(6); i++) o[pick(keys)] = randomJson(depth + 1);
      return o;
    }
  }
}

function mutatedValidBody(): unknown {
  const base: Record<string, unknown> = pick([
    () => ({ eventKey: 'order.paid', email: 'ann@example.org', idempotencyKey: `k${int(5)}` }),
    () => ({ email: `f${int(1000)}@example.org`, firstName: 'F' }),
    () => ({ email: `f${int(1000)}@example.org`, subscriberStatus: 'ACTIVE', firstName: null, fields: [{ fieldId: ID, value: { kind: 'TEXT', text: 't' } }], tags: [ID], topicIds: [] }),
    () => ({ subscribers: [{ email: `s${int(1000)}@example.org` }], mode: 'UPSERT' }),
    () => ({ kind: pick(['TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_OPTION', 'MULTI_OPTION']), text: 'x', number: 1, date: '2024-01-01', booleanValue: true, optionId: ID, optionIds: [ID] }),
    () => ({ subscriberIds: [ID], tagIds: [ID] }),
    () => ({ topicIds: [ID], overrideOptOuts: false }),
    () => ({ label: 'L', fieldType: pick(['TEXT', 'SINGLE_CHOICE']), options: ['a'], personalizationTagName: 'l' }),
    () => ({ label: 'L', options: [{ id: null, label: 'a' }], position: 2 }),
    () => ({ name: `t${int(100)}` }),
    () => ({ label: 'T', description: null, enrollExistingSubscribers: true, isDefault: true, active: false }),
    () => ({ name: `s${int(100)}`, expression: { conditionGroups: [{ conditions: [{ subjectType: 'TAGS', fieldRef: null, operator: pick(['HAS_ANY', 'HAS_NONE']), operand: { kind: 'IDS', optionIds: [ID] } }] }] } }),
    () => ({ expression: { conditionGroups: [{ conditions: [{ subjectType: 'PURCHASES', fieldRef: null, operator: 'PURCHASED', operand: { kind: 'PURCHASE', purchase: { sourceId: null, scopeKind: 'ALL_PRODUCTS', period: { kind: 'LAST_DAYS', days: 30 }, count: 1, amount: 10 } } }] }] } }),
    () => ({ name: `shop ${int(100)}`, timeZone: pick(['Europe/Berlin', 'UTC', 'Mars/Olympus']) }),
    () => ({ orders: [{ orderId: `o${int(100)}`, email: 'ann@example.org', orderedAt: '2024-01-01T00:00:00Z', currency: 'EUR', amount: 12.5, items: [{ productId: 'p' }] }] }),
    () => ({ capturedOrdersFromUtc: '2024-01-01T00:00:00Z', complete: chance(0.5) }),
  ])();
  const key = pick([...Object.keys(base), 'occurredAt', 'consent', 'properties', 'subscriberStatus', 'kind', 'tags', 'extra']);
  if (chance(0.8)) base[key] = randomJson(1);
  else delete base[key];
  return base;
}

function randomBody(): { body?: string | Buffer; contentType?: string; encoding?: string } {
  switch (int(7)) {
    case 0: return {};
    case 1: return { body: JSON.stringify(randomJson()), contentType: 'application/json' };
    case 2: return { body: JSON.stringify(mutatedValidBody()), contentType: pick(['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json']) };
    case 3: return { body: JSON.stringify(mutatedValidBody()).slice(0, int(40)), contentType: 'application/json' };
    case 4: return { body: Buffer.from(Array.from({ length: int(200) }, () => int(256))), contentType: pick(['application/json', 'application/octet-stream', 'text/plain', 'multipart/form-data; boundary=x', 'garbage']) };
    case 5: return { body: chance(0.5) ? gzipSync(JSON.stringify(mutatedValidBody())) : Buffer.from('not gzip'), contentType: 'application/json', encoding: pick(['gzip', 'deflate', 'br', 'identity', 'x-unknown']) };
    default: return { body: '{"a":'.repeat(int(2000)) + '1' + '}'.repeat(int(2000)), contentType: 'application/json' };
  }
}

function randomPath(): string {
  let p = chance(0.7) ? pick(KNOWN_PATHS) : '/' + Array.from({ length: 1 + int(4) }, () => encodeURIComponent(randomString()).slice(0, 50)).join('/');
  if (chance(0.1)) p = p.replace(/\/[^/]*$/, '/' + pick(['%E0%A4%A', '%', '..', '.', '%2F', encodeURIComponent('ü'), encodeURIComponent(randomString())]));
  if (chance(0.05)) p = p.toUpperCase();
  if (chance(0.05)) p += '/';
  if (chance(0.5)) {
    const names = ['pageNumber', 'pageSize', 'status', 'search', 'tagId', 'topicId', 'segmentId', 'includeArchived', 'a[b]', 'pageSize[]', randomString()];
    const pairs = Array.from({ length: 1 + int(4) }, () => `${encodeURIComponent(pick(names))}=${encodeURIComponent(randomString())}`);
    if (chance(0.05)) pairs.push(pick(['apiKey=x', 'KEY=1', 'x-api-key=']));
    if (chance(0.1)) pairs.push(pick(['%', '&&&', '=', 'a=%zz', 'pageSize=1&pageSize=2']));
    p += '?' + pairs.join('&');
  }
  return p;
}

/** Header values fetch accepts (latin1 without controls). */
function headerValue(): string {
  return randomString().replace(/[^\x20-\x7e\xa0-\xff]/g, '').trim();
}

interface RawResponse {
  status: number;
  headers: { get(name: string): string | undefined };
  text: string;
}

/** node:http rather than fetch: it sends what fetch refuses (bodies on GET, odd paths as written). */
function rawRequest(base: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: { get: (name) => res.headers[name.toLowerCase()] as string | undefined },
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    // Explicit framing: Node sends bodies of GET/DELETE/OPTIONS unframed otherwise.
    if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
    req.end(body);
  });
}

let stack: Stack;
let subscriber: RunningService | undefined;
let segment: RunningService | undefined;
let webhook: RunningService | undefined;
let gw: Stack['gateways'][number];
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  stack = await startStack(0);
  // With the subscriber service built, valid subscriber requests really reach it.
  if (fs.existsSync(path.resolve(__dirname, '..', '..', 'services', 'subscriber', 'dist', 'main.js'))) {
    subscriber = await startService('subscriber', { NATS_URL: stack.nats.url });
  }
  // ... and valid segment requests the segment service (which reads the subscriber service's catalog).
  if (subscriber && fs.existsSync(path.resolve(__dirname, '..', '..', 'services', 'segment', 'dist', 'main.js'))) {
    segment = await startService('segment', { NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address });
  }
  // ... and webhook requests the webhook service.
  if (fs.existsSync(path.resolve(__dirname, '..', '..', 'services', 'webhook', 'dist', 'main.js'))) {
    webhook = await startService('webhook', { NATS_URL: stack.nats.url });
  }
  gw = await startGateway({
    NATS_URL: stack.nats.url,
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '1000000',
    WEBHOOK_GRPC_ADDR: webhook?.address ?? '127.0.0.1:1',
    SUBSCRIBER_GRPC_ADDR: subscriber?.address ?? '127.0.0.1:1',
    SEGMENT_GRPC_ADDR: segment?.address ?? '127.0.0.1:1',
  });
  ({ accountId, apiKey } = await createAccount(gw, 'fuzz'));
  // Generous limits: the point is the inputs, not 429s.
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000, eventsPerSecond: 100_000, eventsBurst: 100_000 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await webhook?.stop();
  await segment?.stop();
  await subscriber?.stop();
  await stack?.stop();
});

it(`survives ${CASES} generated requests (seed ${SEED})`, async () => {
  const failures: string[] = [];
  for (let i = 0; i < CASES; i++) {
    const method = pick(['GET', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
    const p = randomPath();
    const { body, contentType, encoding } = method === 'GET' || method === 'OPTIONS' ? (chance(0.1) ? randomBody() : {}) : randomBody();
    const headers: Record<string, string> = {};
    if (chance(0.85)) headers['x-api-key'] = chance(0.9) ? apiKey : headerValue();
    if (chance(0.1)) headers.authorization = `Bearer ${headerValue()}`;
    if (contentType) headers['content-type'] = contentType;
    if (encoding) headers['content-encoding'] = encoding;
    if (chance(0.3)) headers['idempotency-key'] = headerValue() || 'k';
    if (chance(0.3)) headers['x-request-id'] = headerValue();
    if (chance(0.1)) headers['x-forwarded-for'] = headerValue();
    const label = `#${i} ${method} ${p.slice(0, 120)} ${JSON.stringify({ ...headers, 'x-api-key': headers['x-api-key'] === apiKey ? '<valid>' : headers['x-api-key'] }).slice(0, 200)}`;
    let res: RawResponse;
    try {
      res = await rawRequest(gw.url, method, p, headers, body);
    } catch (err) {
      failures.push(`${label}: transport error ${(err as Error).message}`);
      continue;
    }
    const text = res.text;
    // 503 only where a service is missing: the subscriber service is started without the segment
    // service's address, so a list filtered by segment cannot be answered.
    const errorId = res.status === 503 ? /"errorId":"([a-z_]+)"/.exec(text)?.[1] : undefined;
    const allowed503 =
      res.status === 503 &&
      ((!subscriber && /^\/(subscribers|fields|tags|topics|segments|purchase-sources)/i.test(p)) ||
        (!segment && /^\/(segments|purchase-sources)/i.test(p)) ||
        errorId === 'segment_service_unavailable');
    if (res.status >= 500 && !allowed503) failures.push(`${label}: ${res.status} ${text.slice(0, 200)}`);
    if (!res.headers.get('x-request-id')) failures.push(`${label}: no X-Request-Id`);
    if (res.status >= 400) {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      if (!json || schemaErrors('ErrorMessageDto', json).length) failures.push(`${label}: ${res.status} not an ErrorMessageDto: ${text.slice(0, 200)}`);
    }
  }
  expect(failures).toEqual([]);
  // Still alive and answering.
  expect(subscriber === undefined ? 'subscriber service not built: 503 allowed on its routes' : 'with subscriber service').toBeTruthy();
  const health = await fetch(`${gw.url}/healthz`);
  expect(health.status).toBe(200);
  expect(() => process.kill(gw.pid, 0)).not.toThrow();
}, 180_000);

/** A request with the valid key; the body is sent as written (JSON numbers like 1e400 survive). */
async function send(method: string, p: string, body?: string) {
  const res = await rawRequest(gw.url, method, p, { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body);
  let json: { errorId?: string; message?: string; details?: Array<{ path: string; problem: string }> } | undefined;
  try {
    json = JSON.parse(res.text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text: res.text };
}

describe('numbers in query strings and paths: plain decimal integers in range, else 400 naming the parameter', () => {
  const BAD = ['1e309', 'Infinity', '-Infinity', 'NaN', '9'.repeat(400), '0x10', '%2B5', '+5', '%205', '1.5', '1.0', '1e2', '0b1', '', '-0', '0', '-1'];
  const routes = ['/subscribers', `/segments/${ID}/subscribers`];
  for (const route of routes) {
    for (const name of ['pageNumber', 'pageSize']) {
      it(`${route} ${name}`, async () => {
        const values = [...BAD, name === 'pageSize' ? '1001' : '1000001'];
        const answers = await Promise.all(values.map((v) => send('GET', `${route}?${name}=${v}`)));
        answers.forEach((res, i) => {
          const label = `${name}=${values[i]}`;
          expect({ label, status: res.status, errorId: res.json?.errorId }).toEqual({ label, status: 400, errorId: 'validation_failed' });
          expect({ label, message: res.json?.message }).toEqual({ label, message: expect.stringMatching(new RegExp(`^query\\.${name} must be .*integer`)) });
          expect({ label, details: res.json?.details }).toEqual({ label, details: [{ path: `query.${name}`, problem: expect.stringMatching(/integer/) }] });
        });
        // a repeated parameter is named as well
        const twice = await send('GET', `${route}?${name}=1&${name}=2`);
        expect({ status: twice.status, errorId: twice.json?.errorId, message: twice.json?.message }).toEqual({ status: 400, errorId: 'validation_failed', message: expect.stringContaining(`query.${name} must be given once`) });
      });
    }
  }

  it('accepts plain decimals, leading zeros included', async () => {
    const res = await send('GET', '/subscribers?pageNumber=01&pageSize=0002');
    if (!subscriber) return expect(res.status).toBe(503);
    expect({ status: res.status, pageNumber: (res.json as { pageNumber?: number })?.pageNumber, pageSize: (res.json as { pageSize?: number })?.pageSize }).toEqual({ status: 200, pageNumber: 1, pageSize: 2 });
  });
});

describe('numbers in JSON bodies out of their range: 400 naming the member, never a 5xx', () => {
  const purchase = (extra: string) =>
    `{"expression":{"conditionGroups":[{"conditions":[{"subjectType":"PURCHASES","fieldRef":null,"operator":"PURCHASED","operand":{"kind":"PURCHASE","purchase":{"sourceId":"${ID}","scopeKind":"ALL_PRODUCTS",${extra}}}}]}]}}`;
  const order = (amount: string) => `{"orders":[{"orderId":"o","email":"a@example.org","orderedAt":"2024-01-01T00:00:00Z","currency":"EUR","amount":${amount},"items":[{"productId":"p"}]}]}`;
  const cases: Array<[string, string, string, string, RegExp]> = ([
    ['PATCH', `/fields/${ID}`, '{"position": 1e400}', 'body.position', /out of range/],
    ['PATCH', `/fields/${ID}`, `{"position": ${'9'.repeat(400)}}`, 'body.position', /out of range/],
    ['PATCH', `/fields/${ID}`, '{"position": 3000000000}', 'body.position', /from -2147483648 to 2147483647/],
    ['PATCH', `/fields/${ID}`, '{"options":[{"label":"a","position":-1e400}]}', 'body.options[0].position', /out of range/],
    ['POST', '/subscribers', `{"email":"n@example.org","fields":[{"fieldId":"${ID}","value":{"kind":"NUMBER","number":1e400}}]}`, 'body.fields[0].value.number', /out of range/],
    ['POST', '/segments/preview', purchase('"count":3000000000'), 'body.expression.conditionGroups[0].conditions[0].operand.purchase.count', /from -2147483648/],
    ['POST', '/segments/preview', purchase('"amount":1e400'), 'body.expression.conditionGroups[0].conditions[0].operand.purchase.amount', /out of range/],
    ['POST', '/segments/preview', purchase('"period":{"kind":"LAST_DAYS","days":1e309}'), 'body.expression.conditionGroups[0].conditions[0].operand.purchase.period.days', /out of range/],
    ['POST', '/segments/preview', purchase('"period":{"kind":"LAST_DAYS","days":-3000000000}'), 'body.expression.conditionGroups[0].conditions[0].operand.purchase.period.days', /from -2147483648/],
    ['POST', `/purchase-sources/${ID}/orders`, order('1e400'), 'body.orders[0].amount', /out of range/],
  ] as Array<[string, string, string, string, RegExp]>).map(([method, p, body, member, problem]) => [method, p, member, body, problem]);
  it.each(cases)('%s %s %s', async (method, p, member, body, problem) => {
    const res = await send(method, p, body);
    expect({ status: res.status, errorId: res.json?.errorId }).toEqual({ status: 400, errorId: 'validation_failed' });
    expect(res.json?.details).toContainEqual({ path: member, problem: expect.stringMatching(problem) });
  });
});

describe(`JSON bodies nested deeper than ${MAX_JSON_DEPTH} levels: 400 json_too_deep, nothing stored`, () => {
  const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
  const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('POST /events with properties 10,000 deep (was a 500: JSON.stringify overflowed)', async () => {
    const before = (await readEvents(stack.nc, accountId)).length;
    for (const properties of [deep(10_000), deepArray(10_000), deep(MAX_JSON_DEPTH)]) {
      const res = await send('POST', '/events', `{"eventKey":"order.paid","email":"deep@example.org","properties":${properties}}`);
      expect({ status: res.status, errorId: res.json?.errorId, message: res.json?.message }).toEqual({ status: 400, errorId: 'json_too_deep', message: expect.stringContaining(`${MAX_JSON_DEPTH} levels`) });
    }
    // the limit counts the top-level object: properties may nest one level less
    const fits = await send('POST', '/events', `{"eventKey":"order.paid","email":"deep@example.org","properties":${deep(MAX_JSON_DEPTH - 2)}}`);
    expect(fits.status).toBe(202);
    const stored = await readEvents(stack.nc, accountId);
    expect(stored.length).toBe(before + 1);
  });

  it.each([
    ['POST', '/subscribers', (d: string) => `{"email":"deep@example.org","firstName":${d}}`],
    ['POST', '/subscribers/sync', (d: string) => `{"mode":"UPSERT","subscribers":[${d}]}`],
    ['PATCH', `/fields/${ID}`, (d: string) => `{"options":${d}}`],
    ['POST', '/segments/preview', (d: string) => `{"expression":${d}}`],
  ])('%s %s 10,000 deep', async (method, p, body) => {
    for (const d of [deep(10_000), deepArray(10_000)]) {
      const res = await send(method, p, body(d));
      expect({ status: res.status, errorId: res.json?.errorId }).toEqual({ status: 400, errorId: 'json_too_deep' });
    }
  });

  it('a gzip-encoded deep body is refused the same way (the scan sees the inflated bytes)', async () => {
    const res = await rawRequest(gw.url, 'POST', '/events', { 'x-api-key': apiKey, 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(`{"eventKey":"a","email":"deep@example.org","properties":${deepArray(10_000)}}`));
    expect({ status: res.status, errorId: JSON.parse(res.text).errorId }).toEqual({ status: 400, errorId: 'json_too_deep' });
  });

  it('POST /events with a number beyond the double range in free-form properties: 400 naming it, nothing stored (was stored as null)', async () => {
    const before = (await readEvents(stack.nc, accountId)).length;
    for (const [n, member] of [['1e400', 'body.properties.total'], [`-${'9'.repeat(400)}`, 'body.properties.total']] as const) {
      const res = await send('POST', '/events', `{"eventKey":"order.paid","email":"big@example.org","properties":{"items":[1],"total":${n}}}`);
      expect({ status: res.status, errorId: res.json?.errorId, details: res.json?.details }).toEqual({ status: 400, errorId: 'validation_failed', details: [{ path: member, problem: expect.stringContaining('out of range') }] });
    }
    const ok = await send('POST', '/events', '{"eventKey":"order.paid","email":"big@example.org","properties":{"total":1.5e300,"tiny":1e-400}}');
    expect(ok.status).toBe(202);
    const stored = await readEvents(stack.nc, accountId);
    expect(stored.length).toBe(before + 1);
    expect(stored[stored.length - 1].data).toMatchObject({ properties: { total: 1.5e300, tiny: 0 } });
  });
});

describe('invalid UTF-8 in a JSON body: 400 malformed_json, nothing stored (was stored with U+FFFD)', () => {
  const BAD_BYTES: Array<[string, number[]]> = [
    ['C3 28 (bad continuation)', [0xc3, 0x28]],
    ['lone FF', [0xff]],
    ['C0 AF (overlong /)', [0xc0, 0xaf]],
    ['ED A0 80 (UTF-16 surrogate)', [0xed, 0xa0, 0x80]],
    ['E2 82 (truncated)', [0xe2, 0x82]],
    ['F5 80 80 80 (beyond U+10FFFF)', [0xf5, 0x80, 0x80, 0x80]],
  ];
  /** A JSON text whose string member `where` holds `bytes` between two ASCII letters. */
  const withBytes = (json: string, bytes: number[]) => {
    const [head, tail] = json.split('@BYTES@');
    return Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(bytes), Buffer.from(tail, 'utf8')]);
  };
  const post = (p: string, body: Buffer, contentType = 'application/json') =>
    rawRequest(gw.url, 'POST', p, { 'x-api-key': apiKey, 'content-type': contentType }, body).then((r) => ({ status: r.status, errorId: JSON.parse(r.text).errorId as string }));

  it.each(BAD_BYTES)('POST /events with %s inside a string', async (_name, bytes) => {
    const before = (await readEvents(stack.nc, accountId)).length;
    expect(await post('/events', withBytes('{"eventKey":"order.paid","email":"utf@example.org","properties":{"name":"a@BYTES@b"}}', bytes))).toEqual({ status: 400, errorId: 'malformed_json' });
    expect(await post('/events', withBytes('{"eventKey":"order.paid","email":"utf@example.org","properties":{"a@BYTES@":1}}', bytes), 'application/json; charset=utf-8')).toEqual({ status: 400, errorId: 'malformed_json' });
    expect((await readEvents(stack.nc, accountId)).length).toBe(before);
  });

  it.each(BAD_BYTES)('POST /subscribers with %s in firstName', async (_name, bytes) => {
    expect(await post('/subscribers', withBytes('{"email":"utf8@example.org","firstName":"A@BYTES@n"}', bytes))).toEqual({ status: 400, errorId: 'malformed_json' });
    if (subscriber) expect((await send('GET', '/subscribers/by-email/utf8%40example.org')).status).toBe(404);
  });

  it('an unpaired surrogate escape (valid JSON, no Unicode text) is 400 naming the member, nothing stored (was stored as U+FFFD)', async () => {
    const before = (await readEvents(stack.nc, accountId)).length;
    const cases: Array<[string, string, string]> = [
      ['/subscribers', '{"email":"sur@example.org","firstName":"A\\udfffB"}', 'body.firstName'],
      ['/tags', '{"name":"T\\ud800"}', 'body.name'],
      ['/events', '{"eventKey":"order.paid","email":"sur@example.org","properties":{"n":["\\uD83D"]}}', 'body.properties.n[0]'],
    ];
    for (const [p, body, member] of cases) {
      const res = await send('POST', p, body);
      expect({ p, status: res.status, errorId: res.json?.errorId, details: res.json?.details }).toEqual({ p, status: 400, errorId: 'validation_failed', details: [{ path: member, problem: expect.stringContaining('unpaired UTF-16 surrogate') }] });
    }
    expect((await readEvents(stack.nc, accountId)).length).toBe(before);
    if (subscriber) expect((await send('GET', '/subscribers/by-email/sur%40example.org')).status).toBe(404);
    // a pair written as two escapes is one character, stored as sent
    expect((await send('POST', '/events', '{"eventKey":"order.paid","email":"sur@example.org","properties":{"n":"\\ud83d\\ude00"}}')).status).toBe(202);
    const stored = await readEvents(stack.nc, accountId);
    expect(stored[stored.length - 1].data).toMatchObject({ properties: { n: '😀' } });
  });

  it('valid multibyte UTF-8 is stored as sent', async () => {
    const res = await post('/events', Buffer.from('{"eventKey":"order.paid","email":"utf@example.org","properties":{"name":"Zoë 中文 😀"}}', 'utf8'));
    expect(res.status).toBe(202);
    const stored = await readEvents(stack.nc, accountId);
    expect(stored[stored.length - 1].data).toMatchObject({ properties: { name: 'Zoë 中文 😀' } });
  });

  it('a charset other than UTF-8 is 415 (it was decoded with replacement characters too)', async () => {
    const body = Buffer.from('{"eventKey":"order.paid","email":"utf@example.org"}', 'utf16le');
    expect(await post('/events', body, 'application/json; charset=utf-16le')).toEqual({ status: 415, errorId: 'unsupported_media_type' });
    expect(await post('/events', body, 'application/json; charset=latin1')).toEqual({ status: 415, errorId: 'unsupported_media_type' });
  });
});

describe('a key sent as a path segment never reaches the log', () => {
  it('the access log carries the path with the key redacted, on the public and the admin listener', async () => {
    const other = (await createAccount(gw, 'fuzz-leak')).apiKey; // a real key, of another account
    const encoded = other.slice(0, 10) + other.slice(10, 13).replace(/./g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`) + other.slice(13);
    const requests: Array<[string, Record<string, string>, string]> = [
      [`/subscribers/${other}`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]'], // 400 invalid_uuid
      [`/subscribers/by-email/${other}`, { 'x-api-key': apiKey }, '/subscribers/by-email/mk_[redacted]'],
      [`/${other}/x`, {}, '/mk_[redacted]/x'], // unauthenticated: 401
      [`/subscribers/${other}TAIL`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]'],
      [`/subscribers/${encoded}`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]'],
      [`/openapi.json/${other}`, {}, '/openapi.json/mk_[redacted]'],
    ];
    for (const [p, headers] of requests) expect((await rawRequest(gw.url, 'GET', p, headers)).status).toBeLessThan(500);
    const admin = await fetch(`${gw.adminUrl}/admin/accounts/${other}`, { headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(admin.status).toBeLessThan(500);
    // pino writes synchronously, but the pipe to this process is not: wait for the last line (the admin request's)
    const until = Date.now() + 10_000;
    while (!gw.output().includes('"path":"/admin/accounts/mk_[redacted]"') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const out = gw.output();
    expect(out).not.toContain(other.slice(3));
    expect(out).not.toContain(encoded.slice(3));
    expect(out).not.toContain(other.slice(13)); // nor the tail of the encoded one
    for (const [, , logged] of requests) expect(out).toContain(`"path":"${logged}"`);
    expect(out).toContain('"path":"/admin/accounts/mk_[redacted]"');
  });
});

describe('nor a trace span', () => {
  let traced: Stack['gateways'][number] | undefined;
  afterAll(async () => traced?.stop());

  it('with the console span exporter, spans carry the redacted path and no query string', async () => {
    traced = await startGateway({ NATS_URL: stack.nats.url, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '1000000', SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1', OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' });
    const key = (await createAccount(traced, 'fuzz-traced')).apiKey;
    expect((await rawRequest(traced.url, 'GET', `/subscribers/${key}?apiKey=${key}`, { 'x-api-key': key })).status).toBe(400);
    expect((await rawRequest(traced.url, 'GET', `/subscribers/${key}`, { 'x-api-key': key })).status).toBe(400);
    const until = Date.now() + 20_000;
    while (!/'url\.path': '\/subscribers\/mk_\[redacted\]'/.test(traced.output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const out = traced.output();
    expect(out).toMatch(/'url\.path': '\/subscribers\/mk_\[redacted\]'/);
    expect(out).toContain("'url.query': 'REDACTED'");
    expect(out).not.toContain(key.slice(3));
  }, 60_000);
});
