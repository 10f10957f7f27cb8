import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStack, type Stack } from './support/harness';

// How the real gateway forwards reader pages to their owner's listener (here a plain HTTP server
// standing in for the form service): over kept-alive connections, reused from request to request,
// and without meeting a connection the owner closed while idle. A new TCP connection per forwarded
// page cost both sides more than the forwarding itself (bench/forms.js).
let stack: Stack;
let owner: http.Server;
let connections = 0;
const seen: { url: string; forwardedFor: string | undefined; body: string }[] = [];

beforeAll(async () => {
  owner = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', forwardedFor: req.headers['x-forwarded-for'] as string | undefined, body });
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ n: seen.length }));
    });
  });
  // An owner that closes idle connections after 2 s (Node's default is 5 s; it says so in its
  // `Keep-Alive: timeout=2` answers): the gateway must not send a request into one it is closing.
  owner.keepAliveTimeout = 2_000;
  owner.on('connection', () => connections++);
  await new Promise<void>((resolve) => owner.listen(0, '127.0.0.1', resolve));
  const { port } = owner.address() as AddressInfo;
  stack = await startStack(1, { FORM_HTTP_ADDR: `127.0.0.1:${port}`, GATEWAY_TRUST_PROXY: '1', GATEWAY_PUBLIC_PER_MINUTE: '100000' });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  owner?.closeAllConnections();
  await new Promise((resolve) => owner?.close(resolve));
});

const submit = (n: number) =>
  fetch(`${stack.gateways[0].url}/public/forms/f-1/submissions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${n % 250}` },
    body: JSON.stringify({ values: { email: `reader${n}@example.org` } }),
  });

it('forwards reader requests over kept-alive connections: twenty in a row reuse one', async () => {
  const before = connections;
  for (let n = 0; n < 20; n++) {
    const res = await submit(n);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ n: seen.length });
    // The owner gets the body untouched and the reader's address as the gateway resolved it.
    expect(seen.at(-1)).toEqual({ url: '/public/forms/f-1/submissions', forwardedFor: `203.0.113.${n}`, body: JSON.stringify({ values: { email: `reader${n}@example.org` } }) });
  }
  expect(connections - before).toBe(1);
});

it('after the owner closed its idle connections, the next request opens a new one instead of failing on a closed one', async () => {
  expect((await submit(100)).status).toBe(202);
  // Past the owner's keep-alive timeout: the connection just used is gone on both sides.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const before = connections;
  expect((await submit(101)).status).toBe(202);
  expect(connections - before).toBe(1);
});
