// Exactly-once in practice: the messaging service is killed with SIGKILL in the middle of a batch of
// deliveries (the relay answers slowly, so messages are on the wire), started again on the same data,
// and every message ends DELIVERED; the relay got each at least once and at most twice, and the ones
// recorded as sent before the kill exactly once. The messages are accepted by the service itself
// (SendEmailMessage, what POST /email-messages calls).
import crypto from 'node:crypto';
import path from 'node:path';
import { createClient } from '@mailer/kit';
import { emailMessagesV1, emailTemplatesV1, senderProfilesV1 } from '@mailer/proto';
import { openStore } from '@mailer/store';
import { startCaptureRelay, startMesh, startNatsServer, type CaptureRelay, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { messageCollections, type EmailMessageDoc } from '../src/mail/store/messages';

jest.setTimeout(150_000);

const COUNT = 50;

describe('delivery after a crash', () => {
  let nats: NatsServerHandle;
  let relay: CaptureRelay;
  let mesh: ServiceMesh;
  const accountId = crypto.randomUUID();

  beforeAll(async () => {
    nats = await startNatsServer();
    relay = await startCaptureRelay({ dataDelayMs: 400 });
    // Sending paused until every message is accepted: the kill then lands in a batch of the 50.
    mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber', 'messaging'], {
      messaging: { SMTP_URL: relay.url, SMTP_POOL_SIZE: '5', MAIL_SEND_CONCURRENCY: '10', MAIL_ACCOUNT_RATE_PER_SECOND: '1000', MAIL_SEND_PAUSED: 'true' },
    });
  });
  afterAll(async () => {
    await mesh?.stop();
    await relay?.close();
    await nats?.stop();
  });

  /** The stored messages, read while no messaging process holds the store. */
  async function storedMessages(): Promise<EmailMessageDoc[]> {
    const store = await openStore({ dataDir: path.join(mesh.get('messaging').dataDir, 'messaging') });
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

  /** COUNT messages accepted through the service's SendEmailMessage. */
  async function acceptAll(): Promise<void> {
    const address = mesh.get('messaging').address;
    const profiles = createClient(senderProfilesV1.SenderProfileServiceClient, address, 30_000);
    const templates = createClient(emailTemplatesV1.EmailTemplateServiceClient, address, 30_000);
    const messages = createClient(emailMessagesV1.EmailMessageServiceClient, address, 30_000);
    try {
      await profiles.createSenderProfile({ accountId, profile: { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' } });
      await templates.createEmailTemplate({ accountId, template: { name: 'receipt', subject: 'Receipt {{ n }}', html: '<p>Receipt {{ n }}</p>' } });
      for (let i = 0; i < COUNT; i++) {
        await messages.sendEmailMessage({ accountId, templateName: 'receipt', email: `crash${i}@example.org`, substitutionDataJson: JSON.stringify({ n: i }), eventPropertiesJson: '', senderProfileId: '', dedupeKey: '', builtinTemplate: 0 });
      }
    } finally {
      profiles.close();
      templates.close();
      messages.close();
    }
  }

  it('kills the service mid-batch; after a restart every message is DELIVERED, none sent twice unless it was on the wire', async () => {
    await acceptAll();
    await mesh.restart('messaging', { env: { MAIL_SEND_PAUSED: 'false' } });
    await relay.waitFor((ms) => ms.length >= 15, 60_000);
    await mesh.get('messaging').kill9();

    const atKill = await storedMessages();
    expect(atKill).toHaveLength(COUNT);
    const sentBeforeKill = atKill.filter((m) => m.status === 'DELIVERED').map((m) => m._id);
    const onTheWire = new Set(atKill.filter((m) => m.sending).map((m) => m._id));
    // The kill did hit the middle of the batch: some were done, some were being sent, some not started.
    expect(sentBeforeKill.length).toBeGreaterThan(0);
    expect(onTheWire.size).toBeGreaterThan(0);
    expect(sentBeforeKill.length + onTheWire.size).toBeLessThan(COUNT);

    relay.setDataDelay(0);
    await mesh.restart('messaging');
    // The jobs the dead process held come back after their ack wait (30 s).
    await relay.waitFor(() => receivedTimes().size === COUNT, 100_000);
    expect(await mesh.get('messaging').stop()).toBe(0);

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
