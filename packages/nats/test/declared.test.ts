import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, startNatsServer, type NatsServerHandle } from '../../testing/src/nats';
import { connectNats, declareJetStream, NatsUnavailable, type NatsConnection } from '../src';
import { waitFor } from './helpers';

/**
 * A nats-server on a fixed port and store directory, and a client of it; `kill()` SIGKILLs the
 * server, `restart()` starts it again where it was. Everything is cleaned up after `body`.
 */
async function withRestartableNats(body: (n: { nc: NatsConnection; kill(): void; restart(): Promise<void> }) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-declared-'));
  const port = await freePort();
  let server: NatsServerHandle = await startNatsServer({ storeDir: dir, port });
  const nc = await connectNats({ url: server.url, name: 'declared', ...server.auth });
  try {
    await body({
      nc,
      kill: () => process.kill(server.pid, 'SIGKILL'),
      async restart() {
        await server.stop();
        server = await startNatsServer({ storeDir: dir, port });
      },
    });
  } finally {
    await nc.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// A NATS restart loses memory-stored buckets and keeps file-stored streams: declareJetStream must
// re-create what is missing after the reconnect, say not-ready while it cannot serve, and run the
// restore hooks before it says ready again.
it('re-creates a lost memory bucket after a restart; ready() false while down, true once restored', () =>
  withRestartableNats(async ({ nc, kill, restart }) => {
    const declared = await declareJetStream(nc, {
      streams: [{ name: 'KEPT', subjects: ['kept.>'], retention: 'limits', maxAgeMs: 60_000, duplicateWindowMs: 10_000 }],
      buckets: [{ name: 'budgets', storage: 'memory' }],
    });
    let restores = 0;
    declared.onRestored(async () => {
      restores++;
    });
    expect(declared.ready()).toBe(true);
    await declared.kv('budgets').put('a', new TextEncoder().encode('1'));
    expect(() => declared.kv('undeclared')).toThrow(/not declared/);

    kill();
    await waitFor('not ready after the kill', () => !declared.ready(), 5_000);
    await restart();
    await waitFor('ready after the restart', () => declared.ready(), 10_000);
    expect(restores).toBe(1);

    // The memory bucket is back, empty, and usable through the same handle; the file stream survived.
    const kv = declared.kv('budgets');
    expect(await kv.get('a')).toBeNull();
    await kv.put('b', new TextEncoder().encode('2'));
    expect((await kv.get('b'))?.string()).toBe('2');
    expect((await (await nc.jetstreamManager()).streams.info('KEPT')).config.name).toBe('KEPT');
    declared.close();
  }), 60_000);

// guard(): a request a caller waits for fails as soon as the connection drops (the client alone
// would hold it until its 5 s request timeout), fails at once while NATS is away, and runs again
// once NATS is back and the declarations are restored.
it('guard() fails a request in flight when NATS dies, fails at once while it is away, and works after the restart', () =>
  withRestartableNats(async ({ nc, kill, restart }) => {
    const declared = await declareJetStream(nc, { buckets: [{ name: 'guarded', storage: 'memory' }] });
    // A responder that never answers: the request waits, as one does on a server that just died.
    nc.subscribe('silent.service');
    await nc.flush();
    const ask = () => nc.request('silent.service', undefined, { timeout: 10_000 });
    const guarded = declared.guard(ask).then(
      () => 'answered',
      (err: unknown) => err,
    );
    const unguarded = ask().then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((r) => setTimeout(r, 100));

    kill();
    const killedAt = Date.now();
    const err = await guarded;
    expect(err).toBeInstanceOf(NatsUnavailable);
    expect(Date.now() - killedAt).toBeLessThan(1_000);
    // The same request without the guard is still waiting for its timeout.
    expect(await Promise.race([unguarded, new Promise((r) => setTimeout(() => r('still waiting'), 500))])).toBe('still waiting');

    const asked = Date.now();
    await expect(declared.guard(() => declared.kv('guarded').get('a'))).rejects.toBeInstanceOf(NatsUnavailable);
    expect(Date.now() - asked).toBeLessThan(1_000); // at once, without a request that waits for its timeout

    await restart();
    await waitFor('ready after the restart', () => declared.ready(), 10_000);
    await declared.guard(() => declared.kv('guarded').put('a', new TextEncoder().encode('1')));
    expect((await declared.guard(() => declared.kv('guarded').get('a')))?.string()).toBe('1');
    declared.close();
  }), 60_000);
