import { NatsConnection, RetentionPolicy, StorageType, nanos } from 'nats';
import { startNatsServer, NatsServerHandle } from '../../testing/src/nats';
import { connectNats, ensureStreams, openKv, publish, STREAMS, streamSpecs } from '../src';

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats({ url: server.url, name: 'streams-test', ...server.auth });
});

afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

describe('ensureStreams', () => {
  it('creates EVENTS, DOMAIN and JOBS with the project settings, and is idempotent', async () => {
    await ensureStreams(nc);
    await ensureStreams(nc);
    const jsm = await nc.jetstreamManager();
    const events = await jsm.streams.info('EVENTS');
    expect(events.config.subjects).toEqual(['events.>']);
    expect(events.config.retention).toBe(RetentionPolicy.Limits);
    expect(events.config.storage).toBe(StorageType.File);
    expect(events.config.max_age).toBe(nanos(30 * 24 * 3600 * 1000));
    expect(events.config.duplicate_window).toBe(nanos(10 * 60 * 1000));
    expect((await jsm.streams.info('DOMAIN')).config.subjects).toEqual(['domain.>']);
    const jobs = await jsm.streams.info('JOBS');
    expect(jobs.config.subjects).toEqual(['jobs.>']);
    expect(jobs.config.retention).toBe(RetentionPolicy.Workqueue);
    expect(STREAMS.EVENTS.name).toBe('EVENTS');
  });

  it('survives several processes creating the same streams at the same moment', async () => {
    const specs = Object.values(streamSpecs({ retentionDays: 3 })).map((s) => ({ ...s, name: `C_${s.name}`, subjects: [`c${s.subjects[0]}`] }));
    const conns = await Promise.all([1, 2, 3, 4].map((i) => connectNats({ url: server.url, name: `racer-${i}`, ...server.auth })));
    try {
      await Promise.all(conns.map((c) => ensureStreams(c, specs)));
      await Promise.all(conns.map((c) => ensureStreams(c, specs)));
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
    const jsm = await nc.jetstreamManager();
    expect(specs[0].maxAgeMs).toBe(3 * 24 * 3600 * 1000);
    for (const spec of specs) {
      expect((await jsm.streams.info(spec.name)).config.max_age).toBe(nanos(spec.maxAgeMs));
    }
  });

  it('updates an existing stream to a changed spec', async () => {
    const spec = { name: 'UPD', subjects: ['upd.>'], retention: 'limits' as const, maxAgeMs: 60_000, duplicateWindowMs: 30_000 };
    await ensureStreams(nc, [spec]);
    await ensureStreams(nc, [{ ...spec, maxAgeMs: 120_000, subjects: ['upd.>', 'upd2.>'] }]);
    const info = await (await nc.jetstreamManager()).streams.info('UPD');
    expect(info.config.max_age).toBe(nanos(120_000));
    expect(info.config.subjects).toEqual(['upd.>', 'upd2.>']);
  });

  it('reports a change the server refuses with the stream name', async () => {
    const spec = { name: 'RET', subjects: ['ret.>'], retention: 'limits' as const, maxAgeMs: 60_000, duplicateWindowMs: 30_000 };
    await ensureStreams(nc, [spec]);
    await expect(ensureStreams(nc, [{ ...spec, retention: 'workqueue' }])).rejects.toThrow(/JetStream stream RET/);
  });
});

describe('publish', () => {
  beforeAll(() => ensureStreams(nc));

  it('JSON-encodes, waits for the PubAck and de-duplicates by msgID', async () => {
    const js = nc.jetstream();
    const first = await publish(js, 'events.acct1', { name: 'signed_up', n: 1 }, { msgID: 'evt-1', headers: { 'x-account': 'acct1' } });
    expect(first.duplicate).toBe(false);
    expect(first.seq).toBeGreaterThan(0);
    const again = await publish(js, 'events.acct1', { name: 'signed_up', n: 1 }, { msgID: 'evt-1' });
    expect(again).toEqual({ seq: first.seq, duplicate: true });
    const other = await publish(js, 'events.acct1', { name: 'signed_up', n: 2 }, { msgID: 'evt-2' });
    expect(other.duplicate).toBe(false);
    expect(other.seq).toBe(first.seq + 1);

    const stored = await (await nc.jetstreamManager()).streams.getMessage('EVENTS', { seq: first.seq });
    expect(stored.json()).toEqual({ name: 'signed_up', n: 1 });
    expect(stored.header.get('x-account')).toBe('acct1');
    expect(stored.header.get('Nats-Msg-Id')).toBe('evt-1');
  });

  it('fails when no stream takes the subject', async () => {
    await expect(publish(nc.jetstream(), 'nowhere.at.all', {})).rejects.toThrow();
  });
});

describe('openKv', () => {
  it('creates a bucket once and binds to it afterwards, also concurrently', async () => {
    const [a, b, c] = await Promise.all([
      openKv(nc, 'api_keys', { ttlMs: 60_000, history: 2 }),
      openKv(nc, 'api_keys', { ttlMs: 60_000, history: 2 }),
      openKv(nc, 'api_keys', { ttlMs: 60_000, history: 2 }),
    ]);
    await a.put('k1', 'revoked');
    expect((await b.get('k1'))?.string()).toBe('revoked');
    expect((await c.get('k1'))?.string()).toBe('revoked');
    const status = await b.status();
    expect(status.ttl).toBe(60_000);
    expect(status.history).toBe(2);

    // A second process (own connection) binds to the same state.
    const nc2 = await connectNats({ url: server.url, name: 'kv-2', ...server.auth });
    try {
      const d = await openKv(nc2, 'api_keys');
      expect((await d.get('k1'))?.string()).toBe('revoked');
    } finally {
      await nc2.close();
    }
  });
});
