// The delivery worker inside the real messaging process: it consumes jobs.email.> from JOBS as a
// durable consumer with a bounded max_deliver, drops jobs it cannot use, and counts outcomes on
// /metrics. (Mail sent through the service: dedupe.int.test.ts, delivery-crash.int.test.ts, and the
// gateway's email tests.)
import crypto from 'node:crypto';
import { connectNats, publish, type NatsConnection } from '@mailer/nats';
import { job } from '@mailer/nats/facts';
import { startCaptureRelay, startNatsServer, startService, waitFor, type CaptureRelay, type NatsServerHandle, type RunningService } from '@mailer/testing';

jest.setTimeout(60_000);

describe('messaging service delivery worker', () => {
  let nats: NatsServerHandle;
  let relay: CaptureRelay;
  let messaging: RunningService;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startNatsServer();
    relay = await startCaptureRelay();
    messaging = await startService('messaging', { NATS_URL: nats.url, SMTP_URL: relay.url, MAIL_SEND_CONCURRENCY: '7' });
    nc = await connectNats({ url: nats.url, name: 'delivery-service-test', ...nats.auth });
  });
  afterAll(async () => {
    await nc?.drain();
    await messaging?.stop();
    await relay?.close();
    await nats?.stop();
  });

  const metrics = async () => (await fetch(`http://127.0.0.1:${messaging.ready.metricsPort}/metrics`)).text();
  const outcome = (text: string, name: string) => Number(new RegExp(`^messaging_delivery_outcomes_total\\{outcome="${name}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);

  it('runs a durable explicit-ack consumer on jobs.email.> with max_deliver set', async () => {
    const info = await (await nc.jetstreamManager()).consumers.info('JOBS', 'messaging-email-delivery');
    expect(info.config.filter_subject).toBe('jobs.email.>');
    expect(info.config.ack_policy).toBe('explicit');
    expect(info.config.max_deliver).toBeGreaterThan(0);
  });

  it('acknowledges a job for an unknown message and terminates a malformed one, sending nothing', async () => {
    const accountId = crypto.randomUUID();
    const js = nc.jetstream();
    const j = job('email', { accountId, messageId: crypto.randomUUID() });
    await publish(js, j.subject, j.payload);
    await publish(js, `jobs.email.${accountId}`, { accountId });
    const text = await waitFor('both jobs counted', async () => {
      const now = await metrics();
      return outcome(now, 'unknown_message') >= 1 && outcome(now, 'malformed') >= 1 && now;
    }, 20_000);
    expect(outcome(text, 'unknown_message')).toBe(1);
    expect(outcome(text, 'malformed')).toBe(1);
    // The outcome is counted before the ack is confirmed: wait for the server to see both settled.
    const jsm = await nc.jetstreamManager();
    await waitFor('both jobs settled', async () => {
      const info = await jsm.consumers.info('JOBS', 'messaging-email-delivery');
      return info.num_pending + info.num_ack_pending === 0;
    }, 10_000);
    expect(relay.messages).toHaveLength(0);
    expect(messaging.output()).toMatch(/email job for an unknown message/);
  });

  it('stops cleanly on SIGTERM (consumer first, then the transport)', async () => {
    expect(await messaging.stop()).toBe(0);
  });
});
