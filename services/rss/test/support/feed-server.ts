import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server on loopback for feed fetches: each path is a handler; every request is recorded
// (path and headers) so a test can assert what was sent and that a refused URL was never requested.
export interface FeedHit {
  path: string;
  headers: http.IncomingHttpHeaders;
}
export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface FeedServer {
  origin: string;
  port: number;
  hits: FeedHit[];
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, Route>();
  const hits: FeedHit[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push({ path, headers: req.headers });
    const handler = routes.get(path.split('?')[0]);
    if (handler) return handler(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such feed');
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    route: (path, handler) => routes.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A handler answering `body` with `contentType` (and extra headers). */
export const serve =
  (body: string | Buffer, contentType: string, headers: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, ...headers }).end(body);
  };
