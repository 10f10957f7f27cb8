import { headers } from 'nats';
import { processCredentials } from '../../testing/src/internal-access';
import { startNatsServer, type NatsServerHandle } from '../../testing/src/nats';
import { ackedPublisher, connectNats, ensureStreams, JetStreamPublishError, openKv, PublishUnanswered, STREAMS, type NatsConnection } from '../src';
import { freshStream } from './helpers';

// The acknowledged publisher the gateway writes its KV entries and events with: the answers are
// JetStream's own (PubAck, duplicate, compare-and-set refusal), against a real nats-server.
let nats: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectNats({ url: nats.url, name: 'acked-publisher', ...nats.auth });
});
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

const bytes = (s: string) => new TextEncoder().encode(s);
const msgId = (id: string) => {
  const h = headers();
  h.set('Nats-Msg-Id', id);
  return h;
};

it('resolves with the stored sequence once the stream has the message; a repeated msgID is a duplicate', async () => {
  const stream = await freshStream(nc);
  const publisher = ackedPublisher(nc);
  const first = await publisher.publish(stream.subject('a'), bytes('{"n":1}'), msgId('m-1'));
  expect(first).toEqual({ stream: stream.name, seq: 1, duplicate: false });
  expect((await publisher.publish(stream.subject('a'), bytes('{"n":1}'), msgId('m-1'))).duplicate).toBe(true);
  // Many at once: each gets its own answer.
  const acks = await Promise.all(Array.from({ length: 200 }, (_, i) => publisher.publish(stream.subject('b'), bytes(String(i)))));
  expect(new Set(acks.map((a) => a.seq)).size).toBe(200);
  const info = await (await nc.jetstreamManager()).streams.info(stream.name);
  expect(info.state.messages).toBe(201);
  publisher.close();
});

it("refuses a compare-and-set on a KV key with JetStream's error (err_code 10071), and stores nothing", async () => {
  const kv = await openKv(nc, 'acked-cas', { storage: 'memory', history: 1 });
  const publisher = ackedPublisher(nc);
  const expect0 = (seq: number) => {
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', String(seq));
    return h;
  };
  const created = await publisher.publish('$KV.acked-cas.k', bytes('1'), expect0(0));
  const refused = publisher.publish('$KV.acked-cas.k', bytes('2'), expect0(0));
  await expect(refused).rejects.toBeInstanceOf(JetStreamPublishError);
  await expect(refused).rejects.toMatchObject({ api_error: { err_code: 10071 } });
  expect((await publisher.publish('$KV.acked-cas.k', bytes('3'), expect0(created.seq))).seq).toBeGreaterThan(created.seq);
  expect(new TextDecoder().decode((await kv.get('k'))!.value)).toBe('3');
  publisher.close();
});

it('fails at once when no stream takes the subject, after the timeout when nobody answers, and on close', async () => {
  const publisher = ackedPublisher(nc, { timeoutMs: 300 });
  await expect(publisher.publish('nostream.x', bytes('1'))).rejects.toMatchObject({ code: '503' });
  // A subscriber that never replies stands for a stream that does not answer in time.
  const silent = nc.subscribe('silent.x');
  const started = Date.now();
  await expect(publisher.publish('silent.x', bytes('1'))).rejects.toMatchObject({ code: 'TIMEOUT' });
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  const pending = publisher.publish('silent.x', bytes('2'));
  publisher.close();
  await expect(pending).rejects.toBeInstanceOf(PublishUnanswered);
  await expect(publisher.publish('silent.x', bytes('3'))).rejects.toMatchObject({ code: 'CLOSED' });
  silent.unsubscribe();
});

it("receives its answers under the process's own inbox, the only one its NATS user may subscribe to", async () => {
  await ensureStreams(nc, [STREAMS.EVENTS]);
  const { NATS_USER: user, NATS_PASSWORD: pass } = processCredentials('gateway');
  const gateway = await connectNats({ url: nats.url, name: 'gateway', user, pass });
  try {
    const publisher = ackedPublisher(gateway);
    const ack = await publisher.publish('events.acct-1', bytes('{}'), msgId('inbox-test'));
    expect(ack.stream).toBe('EVENTS');
    publisher.close();
  } finally {
    await gateway.close();
  }
});
