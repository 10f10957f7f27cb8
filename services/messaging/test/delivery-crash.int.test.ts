// Exactly-once in practice: a delivery worker process is killed with SIGKILL in the middle of a batch
// (the relay answers slowly, so messages are on the wire), started again on the same data, and
// every message ends DELIVERED; the relay got each at least once and at most twice, and the ones
// recorded as sent before the kill exactly once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '@mailer/store';
import { processCredentials, spawnReady, startCaptureRelay, startNatsServer, type CaptureRelay, type NatsServerHandle, type RunningProcess } from '@mailer/testing';
import { messageCollections, type EmailMessageDoc } from '../src/store/messages';

jest.setTimeout(150_000);

const COUNT = 50;

describe('delivery after a crash', () => {
  let nats: NatsServerHandle;
  let relay: CaptureRelay;
  let worker: RunningProcess | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-delivery-crash-'));
  const accountId = crypto.randomUUID();

  beforeAll(async () => {
    nats = await startNatsServer();
    relay = await startCaptureRelay({ dataDelayMs: 400 });
  });
  afterAll(async () => {
    await worker?.stop();
    await relay?.close();
    await nats?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = () =>
    spawnReady('services/messaging/test/support/delivery-worker.js', {
      ...processCredentials('messaging'),
      NATS_URL: nats.url,
      DATA_DIR: dataDir,
      SMTP_URL: relay.url,
      SMTP_POOL_SIZE: '5',
      MAIL_SEND_CONCURRENCY: '10',
      MAIL_ACCOUNT_RATE_PER_SECOND: '1000',
      TRACKING_SECRET: 'crash-test-secret-0123456789abcdef0123456789',
      SEED_COUNT: String(COUNT),
      SEED_ACCOUNT: accountId,
    });

  /** The stored messages, read while no worker holds the store. */
  async function storedMessages(): Promise<EmailMessageDoc[]> {
    const store = await openStore({ dataDir });
    try {
      return await messageCollections(store).messages.find({ accountId });
    } finally {
      await store.close();
    }
  }

  /** How often the relay received each message (by its stable Message-ID). */
  const receivedTimes = (): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const m of relay.messages) {
      const id = /^<([^@]+)@/.exec(m.messageId ?? '')?.[1] ?? '?';
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };

  it('kills the worker mid-batch; after a restart every message is DELIVERED, none sent twice unless it was on the wire', async () => {
    worker = await start();
    await relay.waitFor((ms) => ms.length >= 15, 60_000);
    await worker.kill9();
    worker = undefined;

    const atKill = await storedMessages();
    expect(atKill).toHaveLength(COUNT);
    const sentBeforeKill = atKill.filter((m) => m.status === 'DELIVERED').map((m) => m._id);
    const onTheWire = new Set(atKill.filter((m) => m.sending).map((m) => m._id));
    // The kill did hit the middle of the batch: some were done, some were being sent, some not started.
    expect(sentBeforeKill.length).toBeGreaterThan(0);
    expect(onTheWire.size).toBeGreaterThan(0);
    expect(sentBeforeKill.length + onTheWire.size).toBeLessThan(COUNT);

    relay.setDataDelay(0);
    worker = await start();
    // The jobs the dead process held come back after their ack wait (30 s).
    await relay.waitFor(() => receivedTimes().size === COUNT, 100_000);
    const stopped = await worker.stop();
    worker = undefined;
    expect(stopped).toBe(0);

    const final = await storedMessages();
    expect(final.filter((m) => m.status !== 'DELIVERED').map((m) => [m._id, m.status])).toEqual([]);
    const times = receivedTimes();
    for (const m of final) {
      const n = times.get(m._id) ?? 0;
      expect([m._id, n >= 1 && n <= 2]).toEqual([m._id, true]);
      // Only a message the dead process was sending can have gone out twice.
      if (n === 2) expect(onTheWire.has(m._id)).toBe(true);
    }
    for (const id of sentBeforeKill) expect([id, times.get(id)]).toEqual([id, 1]);
    // A message resent after the crash shows the abandoned attempt, then the one that went through.
    for (const m of final.filter((x) => onTheWire.has(x._id))) {
      expect(m.attempts.map((a) => a.outcome)).toEqual(['STARTED', 'SENT']);
    }
  });
});
