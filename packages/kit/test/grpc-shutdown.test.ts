import { status } from '@grpc/grpc-js';
import pino from 'pino';
import { createClient, createGrpcServer, createMetrics } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { grpcHealth, waitFor } from '@mailer/testing';

// A service's gRPC server on SIGTERM (service.ts): NOT_SERVING at once, and it stays so whatever the
// health watch finds; calls still served for the delay (the orchestrator's time to stop routing new
// connections here); then tryShutdown: calls in flight finish with their answers, none is dropped.

const HANDLER_MS = 200;

it('shutdown(deadline, delay): NOT_SERVING, still answering during the delay, then drains every call in flight', async () => {
  const server = createGrpcServer({ logger: pino({ level: 'silent' }), metrics: createMetrics('test') });
  server.add(commonV1.FieldUsageServiceService, {
    listFieldUsages: async () => {
      await new Promise((r) => setTimeout(r, HANDLER_MS));
      return { usages: [] };
    },
  });
  const address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
  server.setServing(true);
  // One channel, as the gateway has per service, with many calls on it at once.
  const client = createClient(commonV1.FieldUsageServiceClient, address);
  const calls: Array<{ at: number; code: number }> = [];
  let running = true;
  const loops = Array.from({ length: 16 }, async () => {
    while (running) {
      const at = Date.now();
      const code = await client.listFieldUsages({ accountId: 'a', fieldId: 'f', personalizationTagName: '' }).then(
        () => status.OK,
        (err: { code?: number }) => err.code ?? status.UNKNOWN,
      );
      calls.push({ at, code });
      if (code !== status.OK) await new Promise((r) => setTimeout(r, 20));
    }
  });
  try {
    await waitFor('the load answered', () => calls.filter((c) => c.code === status.OK).length >= 16, 10_000);
    const delayMs = 1_000;
    const shutdownAt = Date.now();
    const stopped = server.shutdown(5_000, delayMs);
    // The health watch finds the store and NATS fine meanwhile: it must not turn it SERVING again.
    server.setServing(true);
    expect(await grpcHealth(address)).toBe('NOT_SERVING');
    await stopped;
    const closedAt = shutdownAt + delayMs;
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(0);
    // Drained: the calls in flight at tryShutdown finished (each takes HANDLER_MS), not more.
    expect(Date.now() - closedAt).toBeLessThan(HANDLER_MS + 2_000);
    running = false;
    await Promise.all(loops);

    const during = calls.filter((c) => c.at >= shutdownAt && c.at < closedAt - 100);
    expect(during.length).toBeGreaterThanOrEqual(16);
    // Everything sent before the listener closed was answered OK: during the delay and in flight at the close.
    expect(calls.filter((c) => c.at < closedAt - 100 && c.code !== status.OK)).toEqual([]);
    // After it, nothing listens: calls fail UNAVAILABLE (a client then picks another replica).
    const after = calls.filter((c) => c.at > Date.now() - 100);
    expect(after.every((c) => c.code === status.UNAVAILABLE)).toBe(true);
  } finally {
    running = false;
    client.close();
    await server.shutdown(100);
  }
}, 30_000);
