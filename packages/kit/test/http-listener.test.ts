import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { contentSecurityPolicy, createClient, createGrpcServer, createMetrics, currentCall, startHttpListener, type HttpListener, type Logger } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { waitFor } from '@mailer/testing';

// The reader-facing listener on loopback with a real Express app behind it and a real gRPC peer:
// what every answer carries (security headers, request id), what the access log and metrics say
// (the route pattern, never the token-bearing path), and that a gRPC call made while serving a
// page forwards the page request's id.

const lines: Array<Record<string, any>> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    done();
  },
});
const logger: Logger = pino({ level: 'info', base: { service: 'test' } }, sink);
const metrics = createMetrics('test');
const TOKEN = 'SECRET-TOKEN-abcdefghijklmnop';
const CSS = 'body{margin:0}';

let grpc: ReturnType<typeof createGrpcServer>;
let client: ReturnType<typeof createClient<commonV1.FieldUsageServiceClient>>;
let listener: HttpListener;
let base: string;
const seenByPeer: string[] = [];

beforeAll(async () => {
  grpc = createGrpcServer({ logger, metrics: createMetrics('peer') });
  grpc.add(commonV1.FieldUsageServiceService, {
    listFieldUsages: async () => {
      seenByPeer.push(currentCall()!.requestId);
      return { usages: [] };
    },
  });
  client = createClient(commonV1.FieldUsageServiceClient, `127.0.0.1:${await grpc.listen('127.0.0.1:0')}`);
  const app = express();
  app.get('/t/o/:token', async (_req, res) => {
    await client.listFieldUsages({ accountId: 'a', fieldId: '', personalizationTagName: '' });
    res.type('text/plain').send('ok');
  });
  // A service answers unknown paths itself (Express's default 404 would set a CSP of its own).
  app.use((_req, res) => void res.status(404).type('text/plain').send('not found'));
  listener = await startHttpListener({ address: '127.0.0.1:0', app, logger, metrics, contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [CSS] }) });
  base = `http://127.0.0.1:${listener.port}`;
});
afterAll(async () => {
  await listener?.close(1_000);
  client?.close();
  await grpc?.shutdown(1_000);
});

describe('startHttpListener', () => {
  it('answers with the security headers and no caching, on routes and on unknown paths alike', async () => {
    for (const path of [`/t/o/${TOKEN}`, '/nowhere']) {
      const res = await fetch(`${base}${path}`);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
      // the page's own stylesheet by its hash, nothing else inline
      expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('echoes a sane request id, forwards it to gRPC peers, and replaces an insane one', async () => {
    const res = await fetch(`${base}/t/o/${TOKEN}`, { headers: { 'x-request-id': 'page-req-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('page-req-1');
    expect(seenByPeer).toContain('page-req-1');
    const odd = await fetch(`${base}/t/o/${TOKEN}`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs and measures the route pattern, never the path with its token', async () => {
    lines.length = 0;
    await fetch(`${base}/t/o/${TOKEN}`, { headers: { 'x-request-id': 'page-req-2' } });
    // the access line is written when the response has finished, which the client may see first
    const line = await waitFor('the access log line', () => lines.find((l) => l.msg === 'request' && l.requestId === 'page-req-2'), 5_000);
    expect(line).toMatchObject({ method: 'GET', route: '/t/o/:token', status: 200 });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/t\/o\/:token",status="200",service="test"\} \d+/);
    expect(text).not.toContain(TOKEN);
  });
});
