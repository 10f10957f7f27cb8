// The backlogs a process owns, as gauges: each durable JetStream consumer it runs (from the server's
// consumer info, polled) and its outbox (documents not yet published, counted at scrape time).
import { runningConsumers, type ConsumerHandle, type OutboxRelay } from '@mailer/nats';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from './logger';

/** How often consumer info is read: one small request per consumer, well under a scrape interval's cost. */
export const CONSUMER_POLL_MS = 15_000;

/**
 * Exports, per durable consumer of this process (label stream, consumer): pending, ack pending,
 * redelivered and their lag (pending + ack pending, what MailerConsumerLagGrowing watches). Polls
 * at once (consumers are started by then) and every CONSUMER_POLL_MS. Replicas of one service read
 * the same durable consumer and export the same values; the chart aggregates with max. While NATS
 * cannot be asked the last values stay (and a warning is logged once per outage).
 */
export function exportConsumerMetrics(registry: Registry, logger: Logger, pollMs = CONSUMER_POLL_MS): () => Promise<void> {
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['stream', 'consumer'], registers: [registry] });
  const lag = gauge('jetstream_consumer_lag', 'Messages of a durable consumer not processed yet: pending + ack pending');
  const pending = gauge('jetstream_consumer_pending_messages', 'Messages of a durable consumer not delivered yet');
  const ackPending = gauge('jetstream_consumer_ack_pending_messages', 'Messages of a durable consumer delivered and not acknowledged yet');
  const redelivered = gauge('jetstream_consumer_redelivered_messages', 'Messages of a durable consumer delivered more than once and not acknowledged yet');
  const all = [lag, pending, ackPending, redelivered];
  const seen = new Map<string, { stream: string; consumer: string }>();
  const failing = new Set<string>();

  async function pollOne(c: ConsumerHandle): Promise<void> {
    const labels = { stream: c.stream, consumer: c.durable };
    const key = `${c.stream}/${c.durable}`;
    try {
      const n = await c.counts();
      lag.set(labels, n.pending + n.ackPending);
      pending.set(labels, n.pending);
      ackPending.set(labels, n.ackPending);
      redelivered.set(labels, n.redelivered);
      seen.set(key, labels);
      failing.delete(key);
    } catch (err) {
      if (!failing.has(key)) logger.warn({ err, stream: c.stream, consumer: c.durable }, 'cannot read consumer info; its backlog metrics keep their last values');
      failing.add(key);
    }
  }

  let polling: Promise<void> | undefined;
  function poll(): void {
    if (polling) return; // a slow round (NATS unreachable) is not stacked up
    const consumers = runningConsumers();
    // A consumer this process no longer runs (stopped) has no backlog of its own to report.
    const live = new Set(consumers.map((c) => `${c.stream}/${c.durable}`));
    for (const [key, labels] of seen) {
      if (live.has(key)) continue;
      for (const g of all) g.remove(labels);
      seen.delete(key);
    }
    polling = Promise.all(consumers.map(pollOne)).then(() => {
      polling = undefined;
    });
  }
  poll();
  const timer = setInterval(poll, pollMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await polling;
  };
}

/** outbox_pending_events: the outbox documents waiting for the relay (counted when scraped). */
export function exportOutboxMetrics(registry: Registry, relay: Pick<OutboxRelay, 'pending'>): void {
  new Gauge({
    name: 'outbox_pending_events',
    help: 'Events recorded in the outbox and not yet published to JetStream',
    registers: [registry],
    // A failed count keeps the last value: one rejected collect would fail the whole scrape
    // (prom-client collects with Promise.all), blanking every metric during a store outage.
    async collect() {
      try {
        this.set(await relay.pending());
      } catch {
        /* keep the last value */
      }
    },
  });
}
