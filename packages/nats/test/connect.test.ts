import { freePort, startNatsServer, NatsServerHandle } from '../../testing/src/nats';
import { waitFor } from '../../testing/src/wait';
import { operatorAuth } from '../../testing/src/internal-access';
import { connectNats } from '../src';

describe('connectNats', () => {
  let server: NatsServerHandle | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('keeps retrying until a server that starts later is up', async () => {
    const port = await freePort();
    const logs: string[] = [];
    const connecting = connectNats({ url: `nats://127.0.0.1:${port}`, name: 'late-start', ...operatorAuth, timeoutMs: 10_000, log: (m) => logs.push(m) });
    await waitFor('a failed try', () => logs.some((l) => l.includes('retrying')), 10_000);
    server = await startNatsServer({ port });
    const nc = await connecting;
    try {
      expect(nc.getServer()).toContain(String(port));
      expect(logs.some((l) => l.includes('retrying'))).toBe(true);
      await nc.flush();
    } finally {
      await nc.close();
    }
  });

  it('gives up after timeoutMs with a clear message', async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(connectNats({ url: `nats://127.0.0.1:${port}`, name: 'dead', timeoutMs: 1_500 })).rejects.toThrow(
      new RegExp(`cannot connect to NATS at nats://127.0.0.1:${port} within 1500 ms`),
    );
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(3_000);
  });

  it('reconnects after the server restarts', async () => {
    const port = await freePort();
    server = await startNatsServer({ port });
    const events: string[] = [];
    const nc = await connectNats({ url: server.url, name: 'reconnect', ...server.auth, log: (m) => events.push(m) });
    try {
      await server.stop();
      server = await startNatsServer({ port });
      const deadline = Date.now() + 10_000;
      while (!events.includes('nats reconnect') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(events).toContain('nats reconnect');
      await nc.flush();
    } finally {
      await nc.close();
    }
  });
});
