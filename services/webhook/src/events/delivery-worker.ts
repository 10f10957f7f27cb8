// The delivery worker: wakes on JOBS `jobs.webhook.>` and on a due-time scan of the deliveries, and runs
// attempts (app/attempt-delivery.ts) in the background under two bounds: at most `perSubscription`
// attempts of one subscription in flight and `concurrency` in all. A job is acknowledged as soon as its
// attempt has started or been left to the scan: the stored delivery is the truth (due, claimed,
// settled), so the job is only a wake-up and no handler ever waits for a slow target. What a slow or
// dead subscription cannot take now waits behind its own attempts (in memory, up to MAX_WAITING; beyond
// that it stays due in the store for the scan), so it never holds a slot another subscription needs.
// Retries are the same: a failed attempt stores its next due time; the scan finds it then (durable,
// nothing held in memory). A worker killed mid-attempt leaves a claim that expires, then the scan
// takes the delivery again.
import type { NatsConnection } from 'nats';
import type { Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import { attemptDelivery, type AttemptDeps } from '../app/attempt-delivery';
import { NATS_ACCESS } from '../nats-access';

/** Deliveries one subscription may have waiting in memory for its in-flight bound. */
const MAX_WAITING = 1000;

export interface DeliveryWorkerOptions {
  nc: NatsConnection;
  deps: AttemptDeps;
  /** Attempts of one subscription in flight at once (WEBHOOK_SUBSCRIPTION_IN_FLIGHT). */
  perSubscription: number;
  /** Attempts in flight in all (WEBHOOK_DELIVERY_CONCURRENCY). */
  concurrency: number;
  /** How often the store is scanned for due deliveries (retries, overflow, expired claims). */
  scanIntervalMs: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  outcomes?: { inc(labels: { outcome: string }): void };
}

export interface DeliveryWorker {
  /** Runs a due-time scan now (tests, and after a subscription's attempts free a slot). */
  scan(): Promise<void>;
  stop(): Promise<void>;
}

export function startDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { deps, logger } = opts;
  const inFlightBySubscription = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const slotWaiters: Array<() => void> = [];
  let total = 0;
  // Something due was left for the scan because its subscription was at its bound.
  let overflow = false;
  let stopped = false;

  const release = () => {
    total--;
    slotWaiters.shift()?.();
  };
  const globalSlot = (): Promise<void> => {
    if (total < opts.concurrency) {
      total++;
      return Promise.resolve();
    }
    return new Promise((resolve) => slotWaiters.push(() => (total++, resolve())));
  };

  // Deliveries waiting for their subscription's room, in this replica's memory only (the store holds them
  // due, so a crash loses nothing); beyond MAX_WAITING per subscription they are left to the scan.
  const waiting = new Map<string, Array<{ accountId: string; deliveryId: string }>>();

  /**
   * Starts an attempt when the subscription has room, else queues it behind the subscription's own
   * attempts. The caller holds a global slot: the attempt keeps it (and hands it to the subscription's
   * next waiting delivery when it ends), a queued delivery gives it back at once.
   */
  const start = (accountId: string, subscriptionId: string, deliveryId: string): boolean => {
    const n = inFlightBySubscription.get(subscriptionId) ?? 0;
    if (n >= opts.perSubscription) {
      const queue = waiting.get(subscriptionId) ?? [];
      if (queue.length < MAX_WAITING) {
        queue.push({ accountId, deliveryId });
        waiting.set(subscriptionId, queue);
      } else {
        overflow = true;
      }
      release();
      return false;
    }
    inFlightBySubscription.set(subscriptionId, n + 1);
    const p = attemptDelivery(deps, accountId, deliveryId)
      .then((outcome) => opts.outcomes?.inc({ outcome: outcome.toLowerCase() }))
      .catch((err: unknown) => logger.error({ err, accountId, deliveryId }, 'webhook attempt failed; the delivery stays due'))
      .finally(() => {
        const left = (inFlightBySubscription.get(subscriptionId) ?? 1) - 1;
        if (left > 0) inFlightBySubscription.set(subscriptionId, left);
        else inFlightBySubscription.delete(subscriptionId);
        running.delete(p);
        const queue = waiting.get(subscriptionId);
        const next = queue?.shift();
        if (queue && queue.length === 0) waiting.delete(subscriptionId);
        if (next && !stopped) start(next.accountId, subscriptionId, next.deliveryId);
        else release();
        if (overflow) kickScan();
      });
    running.add(p);
    return true;
  };

  let scanning: Promise<void> | null = null;
  let rescan = false;
  const scanOnce = async (): Promise<void> => {
    const free = opts.concurrency - total;
    if (free <= 0 || stopped) return;
    const saturated = [...inFlightBySubscription].filter(([, n]) => n >= opts.perSubscription).map(([id]) => id);
    overflow = false;
    const due = await deps.deliveries.dueAcrossAccounts(deps.now(), free, saturated);
    for (const d of due) {
      if (total >= opts.concurrency) {
        overflow = true;
        break;
      }
      total++;
      start(d.accountId, d.subscriptionId, d._id);
    }
    // A full page: more may be due right now.
    if (due.length === free) overflow = true;
  };
  const scan = (): Promise<void> => {
    if (scanning) {
      rescan = true;
      return scanning;
    }
    scanning = (async () => {
      try {
        do {
          rescan = false;
          await scanOnce();
        } while (rescan && !stopped);
      } catch (err) {
        logger.warn({ err }, 'webhook due-time scan failed; retried next round');
      } finally {
        scanning = null;
      }
    })();
    return scanning;
  };
  let kickTimer: NodeJS.Timeout | null = null;
  const kickScan = () => {
    if (kickTimer || stopped) return;
    kickTimer = setTimeout(() => {
      kickTimer = null;
      void scan();
    }, 20);
  };
  const timer = setInterval(() => void scan(), opts.scanIntervalMs);

  // Jobs are pulled and acknowledged in batches (one pull and one ack round per batch); each job only
  // waits for a free slot in all, never for its subscription's.
  const batchHandler = async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    const results: BatchHandlerResult[] = [];
    for (const msg of msgs) {
      let job;
      try {
        job = parseJob('webhook', msg.data);
      } catch (err) {
        if (!(err instanceof MalformedFactError)) throw err;
        logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed webhook job');
        results.push('term');
        continue;
      }
      await globalSlot();
      start(job.accountId, job.subscriptionId, job.deliveryId);
      results.push('ack');
    }
    return results;
  };
  const consumer = runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.deliveries,
    concurrency: 2,
    batchSize: 64,
    maxDeliver: 20,
    ackWaitMs: 60_000,
    log: (m, extra) => logger.warn(extra ?? {}, m),
    batchHandler,
  });

  return {
    scan,
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (kickTimer) clearTimeout(kickTimer);
      await consumer.stop();
      await Promise.allSettled([...running, scanning]);
    },
  };
}
