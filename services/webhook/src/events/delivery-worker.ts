// The delivery worker: wakes on JOBS `jobs.webhook.>` (each job names deliveries of one subscription) and
// on a due-time scan of the store, and runs attempts (app/attempt-delivery.ts) under two bounds: at most
// `perSubscription` attempts of one subscription in flight and `concurrency` in all.
//
// Each subscription has a lane of its own: the delivery ids it knows are due (in memory, at most
// MAX_WAITING; beyond that they stay due in the store, and the lane reads them back itself once its
// queue runs low) and its attempts in flight, with its own timeout per attempt.
// Lanes share no slots, so a slow or dead target holds only its own.
//
// Work moves in batches, not one store round trip per delivery: the pump claims, in one write,
// what every lane has room for; the attempts run concurrently; their outcomes are recorded in one
// write per batch (whatever ended while the previous batch was being written), which commits with the
// claims written in the same turn. A job is
// acknowledged once its ids are queued: the stored delivery is the truth (due, claimed, settled), so the
// job is only a wake-up and no handler ever waits for a target. Retries are stored due times the scan
// finds. A worker killed mid-batch leaves claims that expire and unrecorded attempts: the scan takes
// those deliveries again (at least once, never two attempts of one delivery at once).
import type { NatsConnection } from 'nats';
import type { Logger } from '@mailer/kit';
import { runConsumer, type BatchHandlerResult, type ConsumedMessage } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import { abandoned, attemptDelivery, claimDeliveries, settleDeliveries, type AttemptDeps, type Claimed, type Outcome } from '../app/attempt-delivery';
import type { Subscription } from '../domain/subscription';
import type { DeliveryDoc, DeliveryRepository } from '../store/deliveries';
import { NATS_ACCESS } from '../nats-access';

/** Deliveries one subscription may have waiting in memory for its in-flight bound. */
const MAX_WAITING = 1000;
/** Deliveries waiting in memory in all (beyond: left due in the store for the scan). */
const MAX_QUEUED = 100_000;
/** Outcomes recorded in one write at most. */
const SETTLE_BATCH = 500;

export interface DeliveryWorkerOptions {
  nc: NatsConnection;
  deps: AttemptDeps & { deliveries: Pick<DeliveryRepository, 'dueAcrossAccounts' | 'dueOfSubscription'> };
  /** Attempts of one subscription in flight at once (WEBHOOK_SUBSCRIPTION_IN_FLIGHT). */
  perSubscription: number;
  /** Attempts in flight in all (WEBHOOK_DELIVERY_CONCURRENCY). */
  concurrency: number;
  /** How often the store is scanned for due deliveries (retries, overflow, expired claims). */
  scanIntervalMs: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  outcomes?: { inc(labels: { outcome: string }, value?: number): void };
}

export interface DeliveryWorker {
  /** Runs a due-time scan now. */
  scan(): Promise<void>;
  stop(): Promise<void>;
}

interface Lane {
  accountId: string;
  subscriptionId: string;
  /** Delivery ids known to be due, oldest first. */
  queue: Set<string>;
  /** Attempts posting now, and deliveries in the claim being written. */
  inFlight: number;
  claiming: number;
  /** Outcomes that disable the subscription, not recorded yet: the lane starts nothing meanwhile. */
  disabling: number;
  /** Due deliveries were left in the store when the queue was full: the lane reads them back (refill). */
  leftInStore: boolean;
  refilling: boolean;
}

export function startDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { deps, logger, perSubscription } = opts;
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  let inFlight = 0;
  let queued = 0;
  // Something due was left in the store because a queue was full: scan again when a lane has room.
  let overflow = false;
  let stopped = false;
  const count = (outcome: string, n: number) => n > 0 && opts.outcomes?.inc({ outcome: outcome.toLowerCase() }, n);

  const laneOf = (accountId: string, subscriptionId: string): Lane => {
    let lane = lanes.get(subscriptionId);
    if (!lane) lanes.set(subscriptionId, (lane = { accountId, subscriptionId, queue: new Set(), inFlight: 0, claiming: 0, disabling: 0, leftInStore: false, refilling: false }));
    return lane;
  };
  const forgetIfIdle = (lane: Lane) => {
    if (lane.queue.size === 0 && lane.inFlight === 0 && lane.claiming === 0 && lane.disabling === 0 && !lane.leftInStore && !lane.refilling) lanes.delete(lane.subscriptionId);
  };
  const enqueue = (accountId: string, subscriptionId: string, ids: readonly string[]) => {
    const lane = laneOf(accountId, subscriptionId);
    for (const id of ids) {
      if (lane.queue.has(id)) continue;
      if (lane.queue.size >= MAX_WAITING) {
        lane.leftInStore = true;
        break;
      }
      if (queued >= MAX_QUEUED) {
        overflow = true;
        break;
      }
      lane.queue.add(id);
      queued++;
    }
    forgetIfIdle(lane);
  };
  const take = (lane: Lane, n: number): string[] => {
    const ids: string[] = [];
    for (const id of lane.queue) {
      if (ids.length === n) break;
      ids.push(id);
    }
    for (const id of ids) lane.queue.delete(id);
    queued -= ids.length;
    return ids;
  };

  // ---- outcomes: recorded in batches, one write each ----
  const pending: Array<{ outcome: Outcome; lane?: Lane }> = [];
  let settling: Promise<void> | null = null;
  const settle = (): Promise<void> =>
    (settling ??= (async () => {
      while (pending.length) {
        const batch = pending.splice(0, SETTLE_BATCH);
        try {
          await settleDeliveries(deps, batch.map((b) => b.outcome));
          const byOutcome = new Map<string, number>();
          for (const { outcome } of batch) byOutcome.set(outcome.outcome, (byOutcome.get(outcome.outcome) ?? 0) + 1);
          for (const [outcome, n] of byOutcome) count(outcome, n);
        } catch (err) {
          logger.error({ err, deliveries: batch.length }, 'recording webhook attempts failed; their deliveries are attempted again once their claims expire');
        }
        for (const { outcome, lane } of batch) {
          if (lane && outcome.disable) {
            lane.disabling--;
            forgetIfIdle(lane);
          }
        }
        schedulePump();
      }
    })().finally(() => (settling = null)));
  let settleScheduled = false;
  const record = (outcome: Outcome, lane?: Lane) => {
    if (lane && outcome.disable) lane.disabling++;
    pending.push({ outcome, lane });
    if (settleScheduled) return;
    settleScheduled = true;
    setImmediate(() => {
      settleScheduled = false;
      void settle();
    });
  };

  // ---- attempts ----
  const start = (lane: Lane, sub: Subscription, delivery: DeliveryDoc, claimId: string) => {
    lane.inFlight++;
    inFlight++;
    const p = attemptDelivery(deps, sub, delivery, claimId)
      .then((outcome) => record(outcome, lane))
      .catch((err: unknown) => logger.error({ err, accountId: delivery.accountId, deliveryId: delivery._id }, 'webhook attempt failed; the delivery stays claimed until its claim expires'))
      .finally(() => {
        lane.inFlight--;
        inFlight--;
        running.delete(p);
        forgetIfIdle(lane);
        schedulePump();
        if (overflow) kickScan();
      });
    running.add(p);
  };

  // ---- a lane whose queue overflowed reads its due deliveries back from the store ----
  const refill = async (lane: Lane) => {
    lane.leftInStore = false;
    lane.refilling = true;
    try {
      const due = await deps.deliveries.dueOfSubscription(lane.accountId, lane.subscriptionId, deps.now(), MAX_WAITING);
      enqueue(lane.accountId, lane.subscriptionId, due);
      if (due.length === MAX_WAITING) lane.leftInStore = true; // a full page: there may be more
    } catch (err) {
      // the due-time scan takes the lane's deliveries instead (it no longer counts the lane as busy)
      logger.warn({ err, accountId: lane.accountId, subscriptionId: lane.subscriptionId }, 'reading due webhook deliveries back failed; left to the due-time scan');
      overflow = true;
    } finally {
      lane.refilling = false;
      forgetIfIdle(lane);
      schedulePump();
    }
  };

  // ---- the pump: claims what every lane has room for, in one write ----
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let pumpScheduled = false;
  const claimAndStart = async (): Promise<void> => {
    let free = opts.concurrency - inFlight;
    // Refilled while it still has a slot's worth queued, so the lane does not run dry meanwhile.
    for (const lane of lanes.values()) if (lane.leftInStore && !lane.refilling && lane.queue.size < perSubscription) void refill(lane);
    const batch: Array<{ lane: Lane; ids: string[] }> = [];
    for (const lane of lanes.values()) {
      if (free <= 0) break;
      const n = lane.disabling ? 0 : Math.min(perSubscription - lane.inFlight - lane.claiming, lane.queue.size, free);
      if (n <= 0) continue;
      const ids = take(lane, n);
      lane.claiming += n;
      free -= n;
      batch.push({ lane, ids });
    }
    if (!batch.length) return;
    // The lanes served now go last next time, so none waits behind others when slots are scarce.
    for (const { lane } of batch) lanes.delete(lane.subscriptionId), lanes.set(lane.subscriptionId, lane);
    let claimed: Claimed[] | undefined;
    try {
      claimed = await claimDeliveries(
        deps,
        batch.map(({ lane, ids }) => ({ accountId: lane.accountId, subscriptionId: lane.subscriptionId, deliveryIds: ids })),
      );
    } catch (err) {
      logger.warn({ err, deliveries: batch.reduce((n, b) => n + b.ids.length, 0) }, 'claiming webhook deliveries failed; they stay due for the scan');
      overflow = true;
    } finally {
      for (const { lane, ids } of batch) lane.claiming -= ids.length;
    }
    batch.forEach(({ lane, ids }, i) => {
      const c = claimed?.[i];
      if (c) {
        count('not_due', ids.length - c.deliveries.length);
        // A disabled or deleted subscription queues nothing: what it still had due is given up.
        for (const d of c.deliveries) {
          if (c.subscription?.active) start(lane, c.subscription, d, c.claimId);
          else record(abandoned(d, c.claimId));
        }
      }
      forgetIfIdle(lane);
    });
  };
  const pump = (): Promise<void> => {
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    pumping = (async () => {
      do {
        pumpAgain = false;
        await claimAndStart();
      } while (pumpAgain && !stopped);
    })().finally(() => (pumping = null));
    return pumping;
  };
  // Everything that frees a slot or queues work asks for a pump; one runs per turn of the event loop.
  function schedulePump() {
    if (pumpScheduled || stopped) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      void pump();
    });
  }

  // ---- the due-time scan: retries, expired claims, what a full queue left in the store ----
  let scanning: Promise<void> | null = null;
  const scan = (): Promise<void> =>
    (scanning ??= (async () => {
      try {
        if (stopped) return;
        // Lanes with enough in memory to fill their slots, or that read their own back, take nothing from the scan.
        const busy = [...lanes.values()]
          .filter((l) => l.disabling || l.leftInStore || l.refilling || l.queue.size + l.inFlight + l.claiming >= perSubscription)
          .map((l) => l.subscriptionId);
        const page = opts.concurrency;
        overflow = false;
        const due = await deps.deliveries.dueAcrossAccounts(deps.now(), page, busy);
        for (const d of due) enqueue(d.accountId, d.subscriptionId, [d._id]);
        // A full page: more may be due right now.
        if (due.length === page) overflow = true;
        schedulePump();
      } catch (err) {
        logger.warn({ err }, 'webhook due-time scan failed; retried next round');
      }
    })().finally(() => (scanning = null)));
  let kickTimer: NodeJS.Timeout | null = null;
  const kickScan = () => {
    if (kickTimer || stopped) return;
    kickTimer = setTimeout(() => {
      kickTimer = null;
      void scan();
    }, 20);
  };
  const timer = setInterval(() => void scan(), opts.scanIntervalMs);

  // Jobs are pulled and acknowledged in batches (one pull and one ack round per batch); a job only
  // queues its ids, it never waits for a slot.
  const batchHandler = async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    const results = msgs.map((msg): BatchHandlerResult => {
      try {
        const job = parseJob('webhook', msg.data);
        enqueue(job.accountId, job.subscriptionId, job.deliveryIds);
        return 'ack';
      } catch (err) {
        if (!(err instanceof MalformedFactError)) throw err;
        logger.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed webhook job');
        return 'term';
      }
    });
    schedulePump();
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
      await Promise.allSettled([pumping, scanning]);
      await Promise.allSettled([...running]);
      await settle();
    },
  };
}
