// Real HTTP receivers on loopback for the delivery tests: each records every request it gets (headers,
// raw body, when it arrived and how many of the same webhook-id were in flight), verifies it with the
// `standardwebhooks` package as a customer would, and answers what the test's `respond` says.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** Requests with this webhook-id in flight at this receiver when it arrived (this one included). */
  concurrent: number;
  /** Which of the receiver's secrets verified it (empty: none did). */
  verifiedWith: string[];
}

export type Respond = (req: Received, nth: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests fully answered with a 2xx, by webhook-id. */
  succeeded: Map<string, number>;
  close(): Promise<void>;
}

export async function startReceiver(secrets: string[], respond: Respond = () => ({ status: 204 })): Promise<Receiver> {
  const received: Received[] = [];
  const succeeded = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const perId = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      const verifiedWith = secrets.filter((s) => {
        try {
          new Webhook(s).verify(body, req.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      const r: Received = { id, headers: req.headers, body, at: Date.now(), concurrent: now, verifiedWith };
      received.push(r);
      const nth = (perId.get(id) ?? 0) + 1;
      perId.set(id, nth);
      const answer = respond(r, nth);
      const done = () => inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      res.on('close', done);
      if (answer === 'hang') return;
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '', () => {
          if (answer.status >= 200 && answer.status < 300) succeeded.set(id, (succeeded.get(id) ?? 0) + 1);
        });
      }, answer.delayMs ?? 0).unref(); // a slow answer pending at the end does not keep jest alive
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    succeeded,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
