import net from 'node:net';

export interface PausableProxy {
  port: number;
  /** Holds back every byte in both directions (connections stay open): a peer gone silent, not away. */
  pause(): void;
  /** Delivers what was held back, in order, and forwards again. */
  resume(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy to `targetPort` that can be paused, for tests of what a process does while
 * its link to a server is stalled (e.g. a gateway replica whose watch on NATS hears nothing).
 */
export async function startPausableProxy(targetPort: number): Promise<PausableProxy> {
  const sockets = new Set<net.Socket>();
  const held: Array<{ to: net.Socket; chunk: Buffer }> = [];
  let paused = false;
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (paused) held.push({ to, chunk });
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
