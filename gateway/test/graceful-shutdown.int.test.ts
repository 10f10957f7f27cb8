import http from 'node:http';
import net from 'node:net';
import { adminRequest, createAccount, event, readEvents, sleep, startStack, type Stack } from './support/harness';

// SIGTERM under keep-alive load: the gateway stops taking connections, answers what is in flight with
// `Connection: close`, closes the keep-alive connections and exits within its bound, so that no
// request is applied without being answered (the orchestrator's SIGKILL would otherwise cut them).
let stack: Stack;
afterEach(() => stack?.stop());

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

interface Outcome {
  sentAt: number;
  /** Complete answer: status, body read to the end, and whether it said Connection: close. */
  answer?: { status: number; connectionClose: boolean; at: number };
  /** Failure before the response began (no byte of an answer): the connection was closed or refused. */
  closedBeforeAnswer?: string;
  /** Failure after the response began: a half-answered request. */
  halfAnswered?: string;
}

/** One POST /events on a keep-alive agent, classified by how it ended. */
function postEvent(agent: http.Agent, url: string, apiKey: string): Promise<Outcome> {
  const outcome: Outcome = { sentAt: Date.now() };
  return new Promise((resolve) => {
    const body = JSON.stringify(event());
    const req = http.request(
      url + '/events',
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': apiKey } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (!res.complete) outcome.halfAnswered = 'response ended early';
          else {
            JSON.parse(text); // a cut body would not parse
            outcome.answer = { status: res.statusCode!, connectionClose: res.headers.connection === 'close', at: Date.now() };
          }
          resolve(outcome);
        });
        res.on('error', (err) => {
          outcome.halfAnswered = err.message;
          resolve(outcome);
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // 'response' not emitted: not a byte of an answer arrived ("socket hang up", refused, reset)
      if (!outcome.answer && !outcome.halfAnswered) outcome.closedBeforeAnswer = err.code ?? err.message;
      resolve(outcome);
    });
    req.end(body);
  });
}

it('SIGTERM under keep-alive load: exits within the bound; every request fully answered or refused before any byte', async () => {
  stack = await startStack(1);
  const [gw] = stack.gateways;
  const { accountId, apiKey } = await createAccount(gw, 'shutdown');
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000, eventsPerSecond: 100_000, eventsBurst: 100_000 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const outcomes: Outcome[] = [];
  let running = true;
  const clients = Array.from({ length: 4 }, async () => {
    while (running) {
      const o = await postEvent(agent, gw.url, apiKey);
      outcomes.push(o);
      // a refused connection: the listener is gone, nothing to pound on
      if (o.closedBeforeAnswer === 'ECONNREFUSED') await sleep(50);
    }
  });
  try {
    await sleep(1_000);
    expect(outcomes.filter((o) => o.answer?.status === 202).length).toBeGreaterThan(0);

    // One more keep-alive connection whose second request is in flight when SIGTERM comes: its
    // body is only half sent, and the rest follows after the signal.
    const raw = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
    await new Promise((resolve) => raw.once('connect', resolve));
    let received = '';
    raw.on('data', (d) => (received += d.toString()));
    const rawClosed = new Promise((resolve) => raw.once('close', resolve));
    const body = JSON.stringify(event());
    const head = `POST /events HTTP/1.1\r\nHost: x\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    raw.write(head + body);
    await until(() => /\r\n\r\n\{.*\}$/s.test(received));
    expect(received).toMatch(/^HTTP\/1.1 202[^]*\r\nConnection: keep-alive\r\n/i);
    received = '';
    raw.write(head + body.slice(0, 5));
    await sleep(200);

    const sigtermAt = Date.now();
    const stopped = gw.stop(); // SIGTERM, and waits for the exit (the harness SIGKILLs after 10 s)
    await sleep(300);
    raw.write(body.slice(5));
    await rawClosed;
    // The request in flight was answered in full, saying the connection ends, and then it ended.
    expect(received).toMatch(/^HTTP\/1.1 202[^]*\r\nConnection: close\r\n[^]*\r\n\r\n\{"eventId":"[^"]+","duplicate":false\}$/i);
    await stopped;
    const exitedAfter = Date.now() - sigtermAt;
    running = false;
    await Promise.all(clients);

    // Exited by itself (not killed), well inside the default 5 s grace (+3 s for NATS).
    expect(gw.output()).toContain('"msg":"stopped"');
    expect(exitedAfter).toBeLessThan(8_000);

    expect(outcomes.filter((o) => o.halfAnswered)).toEqual([]);
    expect(outcomes.filter((o) => o.answer && o.answer.status !== 202)).toEqual([]);
    const late = outcomes.filter((o) => o.answer && o.sentAt > sigtermAt + 500);
    expect(late.filter((o) => !o.answer!.connectionClose)).toEqual([]);

    // Nothing applied without an answer: the stream holds exactly the events answered 202 (+2 raw).
    const answered = outcomes.filter((o) => o.answer?.status === 202).length + 2;
    expect((await readEvents(stack.nc, accountId)).length).toBe(answered);
  } finally {
    running = false;
    agent.destroy();
  }
}, 60_000);

it('a request still in flight at the end of GATEWAY_SHUTDOWN_GRACE_MS is cut, and the gateway exits', async () => {
  stack = await startStack(1, { GATEWAY_SHUTDOWN_GRACE_MS: '1000' });
  const [gw] = stack.gateways;
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
  const exitedAfter = Date.now() - sigtermAt;
  expect(gw.output()).toContain('"msg":"stopped"');
  expect(exitedAfter).toBeGreaterThanOrEqual(900);
  expect(exitedAfter).toBeLessThan(4_000);
  expect(await ended).toBe(''); // closed without a byte of an answer
}, 60_000);
