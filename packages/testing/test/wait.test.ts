// The waits the suite relies on instead of sleeping: waitFor polls to a deadline; waitForSettled is not
// satisfied while a durable consumer has a message pending or unacknowledged (nor while an outbox holds
// one), and is once everything is acknowledged; outboxOf reads a real service's gauge; a mesh starts
// services that know each other's addresses before any of them runs.
import { AckPolicy, connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { referencesV1 } from '@mailer/proto';
import { startNatsServer, type NatsServerHandle } from '../src/nats';
import { startMesh } from '../src/mesh';
import { outboxOf, waitFor, waitForSettled } from '../src/wait';

let nats: NatsServerHandle;
let nc: NatsConnection;
beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: 'W', subjects: ['w.>'] });
  await jsm.consumers.add('W', { durable_name: 'worker', ack_policy: AckPolicy.Explicit, ack_wait: 60_000_000_000 });
});
afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

/** Whether the promise is still pending after the other work of this turn and a few polls. */
async function stillPending(p: Promise<unknown>, ms = 400): Promise<boolean> {
  return Promise.race([p.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), ms))]);
}

describe('waitFor', () => {
  it('resolves with the first truthy value; fails after the deadline naming what it waited for and the last value', async () => {
    let n = 0;
    expect(await waitFor('three calls', () => ++n >= 3 && n)).toBe(3);
    await expect(waitFor('the impossible', () => 0, 200)).rejects.toThrow(/timed out after 200 ms waiting for the impossible; last: 0/);
  });
});

describe('waitForSettled', () => {
  it('waits while a message is pending, then while it is unacknowledged, and resolves once it is acknowledged', async () => {
    const js = nc.jetstream();
    await js.publish('w.job', 'x');
    const settled = waitForSettled(nc, { timeoutMs: 20_000 });
    expect(await stillPending(settled)).toBe(true); // pending: nobody fetched it
    const consumer = await js.consumers.get('W', 'worker');
    const msg = (await consumer.next({ expires: 2_000 }))!;
    expect(await stillPending(settled)).toBe(true); // delivered, not acknowledged
    msg.ack();
    await settled;
  });

  it('waits while an outbox holds documents', async () => {
    let unpublished = 2;
    const settled = waitForSettled(nc, { outboxes: [async () => unpublished] });
    expect(await stillPending(settled)).toBe(true);
    unpublished = 0;
    await settled;
  });

  it('fails after its deadline naming what is still busy', async () => {
    await nc.jetstream().publish('w.late', 'y');
    await expect(waitForSettled(nc, { timeoutMs: 300 })).rejects.toThrow(/W\/worker: 1 pending, 0 unacknowledged/);
    (await (await nc.jetstream().consumers.get('W', 'worker')).next({ expires: 2_000 }))!.ack();
  });
});

describe('startMesh', () => {
  it('starts real services at addresses chosen first: each answers at the address its peers were given, and its outbox gauge is read', async () => {
    const mesh = await startMesh({ NATS_URL: nats.url }, ['segment', 'rss']);
    try {
      expect(mesh.get('rss').address).toBe(mesh.env.RSS_GRPC_ADDR);
      expect(() => mesh.get('form')).toThrow(/not running/);
      const rss = createClient(referencesV1.ReferenceServiceClient, mesh.env.RSS_GRPC_ADDR, 10_000);
      try {
        expect(await rss.listReferences({ accountId: '0193b6f0-0000-7000-8000-00000000000a', kind: referencesV1.ReferencedKind.REFERENCED_KIND_SEGMENT, id: '0193b6f0-0000-7000-8000-00000000000b' })).toMatchObject({ count: 0 });
      } finally {
        rss.close();
      }
      expect(await Promise.all(mesh.outboxes().map((count) => count()))).toEqual([0, 0]);
      expect(await outboxOf(mesh.get('segment'))()).toBe(0);
      // restarted on the same address and data
      const before = mesh.get('rss').pid;
      const again = await mesh.restart('rss', { kill9: true });
      expect([again.address, again.pid === before]).toEqual([mesh.env.RSS_GRPC_ADDR, false]);
    } finally {
      await mesh.stop();
    }
  }, 90_000);
});
