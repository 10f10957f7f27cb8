import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, startNatsServer, type NatsServerHandle } from '../../testing/src/nats';
import { connectNats, declareJetStream } from '../src';
import { waitFor } from './helpers';

// A NATS restart loses memory-stored buckets and keeps file-stored streams: declareJetStream must
// re-create what is missing after the reconnect, say not-ready while it cannot serve, and run the
// restore hooks before it says ready again.
it('re-creates a lost memory bucket after a restart; ready() false while down, true once restored', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-declared-'));
  const port = await freePort();
  let server: NatsServerHandle = await startNatsServer({ storeDir: dir, port });
  const nc = await connectNats({ url: server.url, name: 'declared', ...server.auth });
  try {
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

    process.kill(server.pid, 'SIGKILL');
    await waitFor(() => !declared.ready(), 5_000, 'not ready after the kill');
    await server.stop();
    server = await startNatsServer({ storeDir: dir, port });
    await waitFor(() => declared.ready(), 10_000, 'ready after the restart');
    expect(restores).toBe(1);

    // The memory bucket is back, empty, and usable through the same handle; the file stream survived.
    const kv = declared.kv('budgets');
    expect(await kv.get('a')).toBeNull();
    await kv.put('b', new TextEncoder().encode('2'));
    expect((await kv.get('b'))?.string()).toBe('2');
    expect((await (await nc.jetstreamManager()).streams.info('KEPT')).config.name).toBe('KEPT');
    declared.close();
  } finally {
    await nc.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
