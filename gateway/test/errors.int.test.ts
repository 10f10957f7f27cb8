import net from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { call, createAccount, expectError, event, startStack, waitForLog, type Stack } from './support/harness';

let stack: Stack;
let gw: Stack['gateways'][number];
let apiKey: string;

beforeAll(async () => {
  stack = await startStack(1);
  gw = stack.gateways[0];
  ({ apiKey } = await createAccount(gw, 'errors'));
});
afterAll(() => stack.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('error catalogue: every error is an ErrorMessageDto', () => {
  it('unknown route -> 404 route_not_found (401 first without a key)', async () => {
    expectError(await call(gw, 'GET', '/nope', { apiKey }), 404, 'route_not_found');
    expectError(await call(gw, 'GET', '/subscribers/x/y/z', { apiKey }), 404, 'route_not_found');
    expectError(await call(gw, 'GET', '/nope'), 401, 'api_key_missing');
  });

  it('wrong method -> 405 method_not_allowed with Allow', async () => {
    const del = await call(gw, 'DELETE', '/reports/emails', { apiKey });
    expectError(del, 405, 'method_not_allowed');
    expect(del.headers.get('allow')).toBe('POST');
    const put = await call(gw, 'PUT', '/subscribers', { apiKey, body: {} });
    expectError(put, 405, 'method_not_allowed');
    expect(put.headers.get('allow')).toBe('GET, POST, HEAD');
    const patch = await call(gw, 'PATCH', '/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', { apiKey, body: {} });
    expectError(patch, 405, 'method_not_allowed');
    expect(patch.headers.get('allow')).toBe('DELETE, GET, HEAD');
  });

  it('malformed JSON -> 400 malformed_json', async () => {
    for (const raw of ['{', '{"eventKey": }', "{'a':1}", 'nul', '{"a":1}}']) {
      expectError(await call(gw, 'POST', '/events', { apiKey, rawBody: raw, headers: { 'content-type': 'application/json' } }), 400, 'malformed_json');
    }
  });

  it('a JSON body that is not an object -> 400 validation_failed', async () => {
    for (const raw of ['[]', '"text"', '42', 'null']) {
      expectError(await call(gw, 'POST', '/events', { apiKey, rawBody: raw, headers: { 'content-type': 'application/json' } }), 400, 'validation_failed');
    }
  });

  it('body over 1 MiB -> 413 payload_too_large; an event too big for the stream too; large ones are accepted', async () => {
    const json = { 'content-type': 'application/json' };
    const envelope = JSON.stringify(event({ properties: { blob: '' } })).length;
    const sized = (bytes: number) => JSON.stringify(event({ properties: { blob: 'x'.repeat(bytes - envelope) } }));
    expect(Buffer.byteLength(sized(1024 * 1024))).toBe(1024 * 1024);
    expectError(await call(gw, 'POST', '/events', { apiKey, rawBody: sized(1024 * 1024 + 1), headers: json }), 413, 'payload_too_large');
    // Within the body limit, but with the event's own members it would exceed NATS' max_payload:
    const tooBigToStore = await call(gw, 'POST', '/events', { apiKey, rawBody: sized(1024 * 1024), headers: json });
    expectError(tooBigToStore, 413, 'payload_too_large');
    expect(tooBigToStore.json.message).toMatch(/too large to store/);
    expect((await call(gw, 'POST', '/events', { apiKey, rawBody: sized(1000 * 1024), headers: json })).status).toBe(202);
    // The body limit applies before anything is stored, to other routes too.
    expectError(await call(gw, 'POST', '/subscribers', { apiKey, rawBody: sized(1024 * 1024 + 1), headers: json }), 413, 'payload_too_large');
  });

  it('non-JSON body -> 415 unsupported_media_type', async () => {
    const body = JSON.stringify(event());
    const cases: Array<Record<string, string>> = [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=latin1' },
      { 'content-type': 'application/json', 'content-encoding': 'compress' },
      {},
    ];
    for (const headers of cases) {
      expectError(await call(gw, 'POST', '/events', { apiKey, rawBody: body, headers }), 415, 'unsupported_media_type');
    }
    expect((await call(gw, 'POST', '/events', { apiKey, rawBody: body, headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(202);
  });

  it('unknown property -> 400 unknown_property naming it', async () => {
    const res = await call(gw, 'POST', '/events', { apiKey, body: event({ colour: 'red' }) });
    expectError(res, 400, 'unknown_property');
    expect(res.json.details).toEqual([{ path: 'body.colour', problem: 'is not a known property' }]);
    expect(res.json.message).toContain('colour');
  });

  it('malformed UUID in the path -> 400 invalid_uuid (before any service call)', async () => {
    const res = await call(gw, 'GET', '/subscribers/not-a-uuid', { apiKey });
    expectError(res, 400, 'invalid_uuid');
    expect(res.json.details).toEqual([{ path: 'path.subscriberId', problem: 'must be a UUID' }]);
  });

  it('query out of range -> 400 validation_failed', async () => {
    for (const q of ['pageSize=0', 'pageSize=1001', 'pageNumber=0', 'pageNumber=x', 'status=GONE']) {
      const res = await call(gw, 'GET', `/subscribers?${q}`, { apiKey });
      expectError(res, 400, 'validation_failed');
      expect(res.json.details[0].path).toMatch(/^query\./);
    }
  });

  it('undecodable path -> 400, never 500', async () => {
    const res = await call(gw, 'GET', '/subscribers/%E0%A4%A', { apiKey });
    expect(res.status).toBe(400);
    expectError(res, 400, res.json.errorId);
  });

  it('a service that is down -> 503 service_unavailable without internals', async () => {
    const res = await call(gw, 'GET', '/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', { apiKey });
    expectError(res, 503, 'service_unavailable');
    expect(res.json.message).toBe('The subscriber service is unavailable; retry later.'); // names the capability
    expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:\d{2,5}\b|grpc|stack/i);
    expectError(await call(gw, 'GET', '/subscribers', { apiKey }), 503, 'service_unavailable');
  });
});

/** Writes raw bytes to the gateway's port and returns what comes back before the connection closes. */
function rawExchange(bytes: string): Promise<string> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer')));
  });
}

describe('requests Node\'s HTTP parser refuses', () => {
  it('broken HTTP -> 400 malformed_request as ErrorMessageDto with X-Request-Id', async () => {
    const out = await rawExchange('GET /events HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(out).toMatch(/^HTTP\/1\.1 400 /);
    expect(out).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4))).toEqual({ errorId: 'malformed_request', message: expect.any(String) });
  });

  it('oversized headers -> 431 headers_too_large', async () => {
    const out = await rawExchange(`GET /events HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(out).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).errorId).toBe('headers_too_large');
  });
});

describe('X-Request-Id', () => {
  it('echoes a sane client value on every kind of response', async () => {
    const id = 'client-req_42:a.b';
    for (const [path, key] of [['/events', apiKey], ['/events', undefined], ['/nope', apiKey], ['/healthz', undefined], ['/events?apiKey=1', apiKey]] as const) {
      const get = path === '/healthz';
      const res = await call(gw, get ? 'GET' : 'POST', path, { apiKey: key, body: get ? undefined : event(), headers: { 'x-request-id': id } });
      expect(res.headers.get('x-request-id')).toBe(id);
    }
    await waitForLog(gw, (l) => l.includes(`"requestId":"${id}"`));
  });

  it('replaces an unsafe or missing value by a generated UUID', async () => {
    for (const bad of ['x'.repeat(129), 'a b', 'a;b', '<x>']) {
      const res = await call(gw, 'POST', '/events', { apiKey, body: event(), headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
    const a = await call(gw, 'GET', '/healthz');
    const b = await call(gw, 'GET', '/healthz');
    expect(a.headers.get('x-request-id')).toMatch(UUID);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('public endpoints', () => {
  it('/healthz is up; /readyz is 503 (ErrorMessageDto) while the subscriber service is down', async () => {
    const health = await call(gw, 'GET', '/healthz');
    expect([health.status, health.json]).toEqual([200, { status: 'ok' }]);
    expect(health.headers.get('ratelimit-limit')).toBeNull();
    expectError(await call(gw, 'GET', '/readyz'), 503, 'service_unavailable');
  });

  it('/openapi.json is a valid OpenAPI 3.1 document; /docs serves Swagger UI', async () => {
    const doc = await call(gw, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(doc.json));
    const docs = await fetch(`${gw.url}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
    const redirect = await fetch(`${gw.url}/docs`, { redirect: 'manual' });
    expect([200, 301, 302]).toContain(redirect.status);
    const css = await fetch(`${gw.url}/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
  });
});

describe('logs and metrics', () => {
  it('logs requestId, accountId, path without the query, never the key', async () => {
    const marker = `needle${Date.now()}`;
    const requestId = `log-${Math.random().toString(36).slice(2)}`;
    await call(gw, 'GET', `/subscribers?search=${marker}`, { apiKey, headers: { 'x-request-id': requestId } });
    const line = await waitForLog(gw, (l) => l.includes(requestId) && l.includes('"msg":"request"'));
    const entry = JSON.parse(line);
    expect(entry).toMatchObject({ path: '/subscribers', route: '/subscribers', method: 'GET', accountId: expect.stringMatching(UUID) });
    expect(gw.output()).not.toContain(marker); // the query string never reaches a log line
    expect(gw.output()).not.toContain(apiKey.slice(3));
  });

  it('metrics use the route pattern, never the raw path', async () => {
    await call(gw, 'GET', '/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', { apiKey });
    await call(gw, 'GET', '/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21'); // 401 before routing
    const text = await (await fetch(gw.metricsUrl)).text();
    expect(text).toMatch(/http_requests_total\{[^}]*method="GET"[^}]*route="\/subscribers\/:subscriberId"[^}]*status="503"/);
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/subscribers\/:subscriberId"[^}]*status="401"/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{[^}]*route="\/events"/);
    expect(text).not.toContain('3f0c2a5e');
    expect(text).toMatch(/route="unmatched"/);
  });
});
