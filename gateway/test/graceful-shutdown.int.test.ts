import http from 'node:http';
import net from 'node:net';
import { LONGEST_DEADLINE_MS } from '@mailer/kit';
import { startService, waitFor } from '@mailer/testing';
import { adminRequest, call, createAccount, sleep, startGateway, type GatewayHandle } from './support/harness';
import { rss2, startFeedServer } from './support/rss-stack';
import { startSubscriberStack, type SubscriberStack } from './support/subscriber-stack';

// A rolling update drops no request. On SIGTERM the gateway answers what is in flight, answers every
// request that reaches it on an open connection with `Connection: close` (so keep-alive clients move
// to another replica instead of meeting a closed socket), closes the connections that stay idle, stops
// accepting connections (after SHUTDOWN_DELAY_MS: the time the orchestrator needs to stop sending new
// ones), and exits well inside the chart's terminationGracePeriodSeconds. A request sent before the
// listener closed always gets a complete HTTP answer: never a reset, never half an answer.
let env: SubscriberStack;
let extra: GatewayHandle | undefined;
beforeAll(async () => {
  env = await startSubscriberStack();
}, 60_000);
afterAll(async () => {
  await extra?.stop();
  await env?.stop();
});

interface Outcome {
  sentAt: number;
  /** A complete answer: its status and whether it said the connection ends. */
  answer?: { status: number; connectionClose: boolean };
  /** The request got no answer: the connection was reset or closed under it (a dropped request). */
  dropped?: string;
  /** The connection was refused: the listener was closed, nothing was sent. */
  refused?: boolean;
}

/** One GET on the client's own keep-alive agent, classified by how it ended. */
function get(agent: http.Agent, url: string, apiKey: string): Promise<Outcome> {
  const outcome: Outcome = { sentAt: Date.now() };
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers: { 'x-api-key': apiKey } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        if (!res.complete) outcome.dropped = 'response ended early';
        else {
          JSON.parse(text); // a cut body would not parse
          outcome.answer = { status: res.statusCode!, connectionClose: res.headers.connection === 'close' };
        }
        resolve(outcome);
      });
      res.on('error', (err) => {
        outcome.dropped = err.message;
        resolve(outcome);
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (outcome.answer || outcome.dropped) return;
      if (err.code === 'ECONNREFUSED') outcome.refused = true;
      else outcome.dropped = err.code ?? err.message;
      resolve(outcome);
    });
  });
}

/**
 * `clients` keep-alive clients, each on its own connection, sending GET /subscribers/{id} one after
 * the other. A client opens a new connection when the gateway said `Connection: close` (as any HTTP
 * client does) while `routed()` says the load balancer still sends new connections to this replica,
 * and stops there otherwise, or at a refused connection (the balancer would now pick another one).
 */
function keepAliveLoad(gw: GatewayHandle, apiKey: string, subscriberId: string, clients: number, routed: () => boolean = () => true) {
  const outcomes: Outcome[][] = Array.from({ length: clients }, () => []);
  const agents = outcomes.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  let running = true;
  const loops = outcomes.map(async (mine, i) => {
    while (running) {
      const o = await get(agents[i], `${gw.url}/subscribers/${subscriberId}`, apiKey);
      mine.push(o);
      if (o.refused || o.dropped || (o.answer?.connectionClose && !routed())) return;
    }
  });
  return {
    outcomes,
    all: () => outcomes.flat(),
    /** Resolves once every client has had two answers on its keep-alive connection. */
    async warm() {
      const deadline = Date.now() + 30_000;
      while (!outcomes.every((mine) => mine.filter((o) => o.answer?.status === 200).length >= 2)) {
        if (Date.now() > deadline) throw new Error('the clients did not all get answers in time');
        await sleep(20);
      }
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const a of agents) a.destroy();
    },
  };
}

async function account(gw: GatewayHandle, name: string) {
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
  const res = await fetch(`${gw.url}/subscribers`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `${name}@example.org` }),
  });
  expect(res.status).toBe(201);
  return { apiKey, subscriberId: ((await res.json()) as { id: string }).id };
}

it('SIGTERM under 64 keep-alive clients: no request dropped; in flight answered; last answers say Connection: close; exits in time', async () => {
  const gw = env.gw;
  const { apiKey, subscriberId } = await account(gw, 'shutdown');
  const load = keepAliveLoad(gw, apiKey, subscriberId, 64);
  await load.warm();

  // One more keep-alive connection whose second request is in flight when SIGTERM comes: its head is
  // sent, and the rest of it only after the signal.
  const raw = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
  await new Promise((resolve) => raw.once('connect', resolve));
  let received = '';
  raw.on('data', (d) => (received += d.toString()));
  const rawClosed = new Promise((resolve) => raw.once('close', resolve));
  const request = `GET /subscribers/${subscriberId} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${apiKey}\r\n`;
  raw.write(`${request}\r\n`);
  const answered = () => /\r\n\r\n\{.*\}$/s.test(received);
  while (!answered()) await sleep(10);
  expect(received).toMatch(/^HTTP\/1.1 200[^]*\r\nConnection: keep-alive\r\n/i);
  received = '';
  raw.write(request);
  await sleep(100);

  const sigtermAt = Date.now();
  const stopped = gw.stop(); // SIGTERM, and waits for the exit (the harness SIGKILLs a hung process)
  await waitFor('the gateway to take the SIGTERM', () => gw.output().includes('"msg":"shutting down"'), 2_000);
  raw.write('\r\n');
  await rawClosed;
  // The request in flight was answered in full, saying the connection ends, and then it ended.
  expect(received).toMatch(new RegExp(`^HTTP/1.1 200[^]*\\r\\nConnection: close\\r\\n[^]*\\r\\n\\r\\n\\{"id":"${subscriberId}"`, 'i'));
  await stopped;
  const exitedAfter = Date.now() - sigtermAt;
  await load.stop();

  // Exited by itself (not killed), well inside the chart's grace period.
  expect(gw.output()).toContain('"msg":"stopped"');
  expect(exitedAfter).toBeLessThan(8_000);
  const all = load.all();
  process.stdout.write(`graceful shutdown: ${all.length} requests, ${all.filter((o) => o.sentAt >= sigtermAt).length} after SIGTERM, exited after ${exitedAfter} ms\n`);
  // Not one request dropped, not one answer that is not a complete 200.
  expect(all.filter((o) => o.dropped)).toEqual([]);
  expect(all.filter((o) => o.answer && o.answer.status !== 200)).toEqual([]);
  // Every client's connection ended on an answer that said so (then its next connection was refused).
  for (const mine of load.outcomes) {
    const last = mine[mine.length - 1];
    expect(last.refused).toBe(true);
    expect(mine[mine.length - 2].answer?.connectionClose).toBe(true);
  }
}, 60_000);

it('SHUTDOWN_DELAY_MS: not ready and still accepting (answers say Connection: close) for the delay while the balancer moves clients away; no request dropped', async () => {
  extra = await startGateway({
    NATS_URL: env.stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: env.subscriber.address,
    API_KEY_MASTER_KEY: env.gw.masterKey,
    ADMIN_TOKEN: env.gw.adminToken,
    SHUTDOWN_DELAY_MS: '3000',
  });
  const gw = extra;
  const { apiKey, subscriberId } = await account(gw, 'delayed');
  expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  // The balancer stops sending new connections here 1.5 s after SIGTERM, within the delay (as
  // kube-proxy does once the terminating pod left the endpoints).
  let sigtermAt = Infinity;
  const load = keepAliveLoad(gw, apiKey, subscriberId, 16, () => Date.now() < sigtermAt + 1_500);
  await load.warm();

  sigtermAt = Date.now();
  const stopped = gw.stop();
  // Within the delay: /readyz says 503 (the orchestrator takes the replica out), new connections are
  // still served, and told to close.
  const readyz = await waitFor('/readyz 503 within the delay after SIGTERM', async () => {
    const res = await fetch(`${gw.url}/readyz`);
    return res.status === 503 && res;
  }, 2_000);
  expect(readyz.headers.get('connection')).toBe('close');
  const during = await get(new http.Agent({ keepAlive: true }), `${gw.url}/subscribers/${subscriberId}`, apiKey);
  expect(during.answer).toEqual({ status: 200, connectionClose: true });
  await stopped;
  const exitedAfter = Date.now() - sigtermAt;
  await load.stop();

  // Not before the delay; within the process's own bound (delay + grace + 3 s).
  expect(exitedAfter).toBeGreaterThanOrEqual(3_000);
  expect(exitedAfter).toBeLessThan(11_000);
  const all = load.all();
  expect(all.filter((o) => o.dropped)).toEqual([]);
  expect(all.filter((o) => o.answer && o.answer.status !== 200)).toEqual([]);
  // Every client moved on after an answer that said Connection: close; none was refused or reset.
  for (const mine of load.outcomes) expect(mine[mine.length - 1].answer?.connectionClose).toBe(true);
  extra = undefined;
}, 60_000);

it('a request still in flight at the end of GATEWAY_SHUTDOWN_GRACE_MS is cut, and the gateway exits', async () => {
  // The shortest grace allowed: the longest deadline of a request (no request with a deadline is cut).
  const grace = LONGEST_DEADLINE_MS;
  extra = await startGateway({ NATS_URL: env.stack.nats.url, SUBSCRIBER_GRPC_ADDR: env.subscriber.address, GATEWAY_SHUTDOWN_GRACE_MS: String(grace) });
  const gw = extra;
  const { apiKey } = await createAccount(gw, 'slow');
  const { port } = new URL(gw.url);
  // An authenticated client that sends half a request body and then nothing: the request never completes.
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const ended = new Promise<string>((resolve) => {
    let received = '';
    socket.on('data', (d) => (received += d.toString()));
    socket.once('close', () => resolve(received));
  });
  socket.write(`POST /events HTTP/1.1\r\nHost: x\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"eventKey":`);
  await sleep(200);

  const sigtermAt = Date.now();
  await gw.stop();
  extra = undefined;
  const exitedAfter = Date.now() - sigtermAt;
  expect(gw.output()).toContain('"msg":"stopped"');
  expect(exitedAfter).toBeGreaterThanOrEqual(grace - 100);
  expect(exitedAfter).toBeLessThan(grace + 3_000);
  expect(await ended).toBe(''); // closed without a byte of an answer
}, 60_000);

it('an RSS feed preview in flight at SIGTERM (its feed answers after 8 s, past any short grace) is answered in full, then the gateway exits', async () => {
  const feeds = await startFeedServer();
  const rss = await startService('rss', { NATS_URL: env.stack.nats.url, OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' });
  try {
    extra = await startGateway({ NATS_URL: env.stack.nats.url, RSS_GRPC_ADDR: rss.address });
    const gw = extra;
    const { apiKey } = await createAccount(gw, 'feed preview');
    feeds.set('/slow.xml', { body: rss2('Slow Blog', [{ guid: 'p-1', title: 'First post' }]), delayMs: 8_000 });
    const preview = call(gw, 'POST', '/rss-newsletters/preview', { apiKey, body: { url: `${feeds.origin}/slow.xml` } }).then(
      (res) => ({ status: res.status, feedTitle: res.json?.feedTitle, items: res.json?.items?.length, connection: res.headers.get('connection') }),
      (err: Error & { cause?: { code?: string; message?: string } }) => ({ failed: err.cause?.code ?? err.cause?.message ?? err.message }),
    );
    while (feeds.hits('/slow.xml') === 0) await sleep(20); // the rss service is reading the feed

    const sigtermAt = Date.now();
    await gw.stop();
    extra = undefined;
    expect(await preview).toEqual({ status: 200, feedTitle: 'Slow Blog', items: 1, connection: 'close' });
    expect(gw.output()).toContain('"msg":"stopped"');
    expect(Date.now() - sigtermAt).toBeLessThan(12_000); // the answer, then the exit: no wait for the whole grace
  } finally {
    await rss.stop();
    await feeds.close();
  }
}, 60_000);

