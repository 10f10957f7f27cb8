import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { schemaErrors } from '../src/openapi/validator';
import { BODY_LIMITS, DEFAULT_BODY_LIMIT } from '../src/middleware/body';
import { MAX_JSON_DEPTH } from '../src/middleware/json-scan';
import { startFullStack, type FullStack } from './support/full-stack';
import { adminRequest, createAccount, readEvents, startGateway, type GatewayHandle, type Stack } from './support/harness';
import { CASE_KINDS, casesFor, documentedErrorIds, operationsOf, unknownPathCase, wrongMethodCase, type Case } from './support/operation-cases';

// Bad requests for every operation of the served /openapi.json, generated from the document
// (support/operation-cases.ts), against a real gateway in front of every real service: each one is
// answered with the status, errorId and `details` member the document promises, never a 5xx, and
// the process keeps answering. Then hand-written cases of the same kind.

const SEED = Number(process.env.FUZZ_SEED ?? 20240611);
/** Passes over every operation, each with fresh random values. */
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 2);

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

const ID = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';

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

let full: FullStack;
let stack: Stack;
let gw: GatewayHandle;
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  full = await startFullStack();
  ({ stack, gw } = full);
  ({ accountId, apiKey } = await createAccount(gw, 'fuzz'));
  // Generous limits: the point is the inputs, not 429s.
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000, eventsPerSecond: 100_000, eventsBurst: 100_000 });
}, 120_000);

afterAll(async () => {
  await full?.stop();
});

/** What is wrong with the answer to a case (undefined: it is the documented one). */
function problemWith(c: Case, res: RawResponse, doc: Record<string, any>): string | undefined { // eslint-disable-line @typescript-eslint/no-explicit-any
  const { expect: want } = c;
  if (res.status !== want.status) return `${res.status} (expected ${want.status}${want.errorId ? ` ${want.errorId}` : ''}): ${res.text.slice(0, 200)}`;
  if (!res.headers.get('x-request-id')) return 'no X-Request-Id';
  if (!want.errorId) return /^text\/html/.test(res.headers.get('content-type') ?? '') ? undefined : `not a plain page: ${res.headers.get('content-type')}`;
  let json: { errorId?: string; details?: Array<{ path: string; problem: string }> };
  try {
    json = JSON.parse(res.text);
  } catch {
    return `not JSON: ${res.text.slice(0, 200)}`;
  }
  if (schemaErrors('ErrorMessageDto', json).length) return `not an ErrorMessageDto: ${res.text.slice(0, 200)}`;
  if (json.errorId !== want.errorId) return `errorId ${json.errorId} (expected ${want.errorId}): ${res.text.slice(0, 200)}`;
  if (want.detail && !json.details?.some((d) => d.path === want.detail!.path && (want.detail!.problem === undefined || d.problem === want.detail!.problem))) {
    return `details ${JSON.stringify(json.details)} do not name ${JSON.stringify(want.detail)}`;
  }
  if (want.allow && (res.headers.get('allow') ?? '').split(', ').sort().join() !== want.allow.split(', ').sort().join()) return `Allow ${res.headers.get('allow')} (expected ${want.allow})`;
  // The answer is one the document lists for this operation (405 and route_not_found answer paths, not operations).
  const op = Object.values(doc.paths).flatMap((item) => Object.values(item as object)).find((o) => o.operationId === c.operationId);
  if (op && want.status !== 405 && !documentedErrorIds(doc, op, want.status).includes(want.errorId)) return `${want.status} ${want.errorId} is not documented for ${c.operationId}`;
  return undefined;
}

/**
 * The same case with what must not change its answer: a gzip-encoded JSON body (the checks see the
 * inflated bytes), odd X-Request-Id and X-Forwarded-For values.
 */
function disguised(c: Case, random: () => number): Case {
  const headers = { ...c.headers };
  const junk = () => ['', 'x'.repeat(300), '<script>', '%00', '\u00e9\u00e8', "' OR 1=1 --", 'a, b, c', '::1', '999.1.1.1'][Math.floor(random() * 9)];
  if (random() < 0.3) headers['x-request-id'] = junk();
  if (random() < 0.1) headers['x-forwarded-for'] = junk();
  // (JSON bodies only: the reader pages' forms are not read compressed, as no browser sends them so)
  if (c.body === undefined || !/json/.test(headers['content-type'] ?? '') || headers['content-encoding'] || c.kind === 'too large' || random() < 0.7) return { ...c, headers };
  return { ...c, headers: { ...headers, 'content-encoding': 'gzip' }, body: gzipSync(c.body) };
}

it(`every operation of /openapi.json: bad requests generated from the document, each answered as documented (seed ${SEED}, ${ROUNDS} rounds)`, async () => {
  const doc = JSON.parse((await rawRequest(gw.url, 'GET', '/openapi.json', {})).text);
  const operations = operationsOf(doc);
  const random = rng(SEED);
  const opts = { apiKey, maxDepth: MAX_JSON_DEPTH, bodyLimit: (p: string) => BODY_LIMITS[p] ?? DEFAULT_BODY_LIMIT };
  const cases: Case[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const o of operations) cases.push(...casesFor(doc, o, random, opts));
    for (const p of Object.keys(doc.paths)) cases.push(...[wrongMethodCase(doc, p, random, apiKey)].filter((c): c is Case => c !== undefined));
    for (let i = 0; i < 20; i++) cases.push(unknownPathCase(random, apiKey));
  }
  const failures: string[] = [];
  const covered = new Map<string, Set<string>>();
  for (const [i, c] of cases.entries()) {
    const label = `#${i} ${c.operationId} [${c.kind}] ${c.method} ${c.path.slice(0, 100)}`;
    let res: RawResponse;
    try {
      const sent = disguised(c, random);
      res = await rawRequest(gw.url, sent.method, sent.path, sent.headers, sent.body);
    } catch (err) {
      failures.push(`${label}: transport error ${(err as Error).message}`);
      continue;
    }
    const problem = problemWith(c, res, doc);
    if (problem) failures.push(`${label}: ${problem}`);
    covered.set(c.operationId, (covered.get(c.operationId) ?? new Set()).add(c.kind));
  }
  expect(failures).toEqual([]);
  if (process.env.FUZZ_VERBOSE) console.log(cases.length, Object.fromEntries([...covered].map(([id, kinds]) => [id, [...kinds].join(', ')])));
  // Every kind of bad input was sent.
  expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(CASE_KINDS));
  // Every operation the gateway serves had cases; at least three kinds each (key, URL, its own input).
  expect(operations.length).toBeGreaterThanOrEqual(126);
  expect(operations.filter((o) => !covered.has(o.operationId)).map((o) => `${o.method} ${o.path}`)).toEqual([]);
  expect(operations.filter((o) => !o.open && covered.get(o.operationId)!.size < 3).map((o) => `${o.method} ${o.path}: ${[...covered.get(o.operationId)!]}`)).toEqual([]);
  // Still alive and answering.
  expect((await rawRequest(gw.url, 'GET', '/healthz', {})).status).toBe(200);
  expect(() => process.kill(gw.pid, 0)).not.toThrow();
}, 300_000);

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
    expect((await send('GET', '/subscribers/by-email/utf8%40example.org')).status).toBe(404);
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
    expect((await send('GET', '/subscribers/by-email/sur%40example.org')).status).toBe(404);
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
    // [path, headers, the path as logged, the answer]
    const requests: Array<[string, Record<string, string>, string, string]> = [
      [`/subscribers/${other}`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]', '400 invalid_uuid'],
      [`/subscribers/by-email/${other}`, { 'x-api-key': apiKey }, '/subscribers/by-email/mk_[redacted]', '400 invalid_email'],
      [`/${other}/x`, {}, '/mk_[redacted]/x', '401 api_key_missing'],
      [`/subscribers/${other}TAIL`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]', '400 invalid_uuid'],
      [`/subscribers/${encoded}`, { 'x-api-key': apiKey }, '/subscribers/mk_[redacted]', '400 invalid_uuid'],
      [`/openapi.json/${other}`, {}, '/openapi.json/mk_[redacted]', '401 api_key_missing'],
    ];
    for (const [p, headers, , answer] of requests) {
      const res = await rawRequest(gw.url, 'GET', p, headers);
      expect({ p, answer: `${res.status} ${JSON.parse(res.text).errorId}` }).toEqual({ p, answer });
    }
    const admin = await fetch(`${gw.adminUrl}/admin/accounts/${other}`, { headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect({ status: admin.status, errorId: ((await admin.json()) as { errorId?: string }).errorId }).toEqual({ status: 400, errorId: 'invalid_uuid' });
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
