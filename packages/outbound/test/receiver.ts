import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// A real HTTP(S) receiver on loopback that records every request it gets, so a test can assert that a
// refused call never reached it. Paths choose the behaviour.
export const CERT = readFileSync(path.join(__dirname, 'fixtures', 'localhost-cert.pem'));
const KEY = readFileSync(path.join(__dirname, 'fixtures', 'localhost-key.pem'));
export const BIG = 100 * 1024;
export const SLOW_MS = 5_000;

export interface Hit {
  method: string;
  path: string;
  host: string;
  body: string;
}

export interface Receiver {
  port: number;
  hits: Hit[];
  /** origin for a URL, e.g. http://127.0.0.1:1234 */
  origin: string;
  close(): Promise<void>;
}

const handle = (hits: Hit[], timers: Set<NodeJS.Timeout>) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const p = req.url ?? '/';
    hits.push({ method: req.method ?? '', path: p, host: req.headers.host ?? '', body });
    const later = (fn: () => void) => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, SLOW_MS);
      timers.add(t);
    };
    switch (p) {
      case '/redirect':
        res.writeHead(302, { location: '/target' }).end('moved');
        return;
      case '/slow':
        later(() => res.end('late'));
        return;
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part;');
        later(() => res.end('the rest'));
        return;
      case '/big': // chunked, no content-length
        for (let i = 0; i < BIG / 1024; i++) res.write(Buffer.alloc(1024, 'a'));
        res.end();
        return;
      case '/big-length':
        res.writeHead(200, { 'content-length': String(BIG) }).end(Buffer.alloc(BIG, 'b'));
        return;
      case '/exact-2k':
        res.end(Buffer.alloc(2048, 'c'));
        return;
      default:
        res.writeHead(200, { 'content-type': 'text/plain', 'x-seen-method': req.method ?? '' }).end(`ok ${req.method} ${body}`);
    }
  });
};

export const startReceiver = async (opts: { host?: string; tls?: boolean } = {}): Promise<Receiver> => {
  const hits: Hit[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = opts.tls ? https.createServer({ cert: CERT, key: KEY }, handle(hits, timers)) : http.createServer(handle(hits, timers));
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    hits,
    origin: `${opts.tls ? 'https' : 'http'}://${shown}:${port}`,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/** A port nothing listens on (bound, then released). */
export const closedPort = async (): Promise<number> => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};
