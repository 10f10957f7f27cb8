import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError, GrpcStatus, TIME_LIMITS } from '@mailer/kit';
import type { ReferenceCheck } from '@mailer/kit/references';
import type { Store } from '@mailer/store';
import type { UsageSources } from '../clients/field-usage';
import type { SegmentMembers } from '../clients/segment-members';
import type { CatalogRepository } from '../store/catalog';
import type { OutboxRepository } from '@mailer/nats';
import type { SubscriberRepository } from '../store/subscribers';

/** What the use cases work with (the service's dependencies); built once in server.ts. */
export interface Deps {
  store: Store;
  subscribers: SubscriberRepository;
  catalog: CatalogRepository;
  outbox: OutboxRepository;
  usage: UsageSources;
  /** The segment service's members of a saved segment (ListSubscribers with segment_id); absent: refused as unavailable. */
  segmentMembers?: SegmentMembers;
  /** The services whose records send to topics (RSS newsletters, automations), asked before a delete; absent: none does. */
  references?: Pick<ReferenceCheck, 'refuseWhileReferenced'>;
  /** Wakes the outbox relay after a write that recorded events. */
  notify(): void;
  /**
   * Waits, bounded, until the events committed so far are published to JetStream (server.ts wires the
   * relay's awaitPublished with OUTBOX_PUBLISH_WAIT_MS). Absent (unit tests): writes do not wait.
   */
  awaitPublished?(): Promise<void>;
  /** Bulk writes wait while more events than this wait for the relay. */
  maxPendingEvents: number;
  now?: () => string;
  newId?: () => string;
}

/** How long a bulk write waits for the event backlog to shrink (the gateway's deadline for bulk writes allows for it). */
const BACKLOG_WAIT_MS = TIME_LIMITS.backlogWait;

/**
 * Backpressure for bulk writes: each commits up to thousands of events in one go, faster than they
 * can be published. Waiting here keeps the outbox (held in memory by the embedded store) bounded;
 * when events are not published at all (NATS down) the write is refused rather than queued forever.
 */
export async function awaitEventBacklog(deps: Deps): Promise<void> {
  const deadline = Date.now() + BACKLOG_WAIT_MS;
  while ((await deps.outbox.pendingAllAccounts()) > deps.maxPendingEvents) {
    deps.notify();
    if (Date.now() > deadline) {
      throw new DomainError(GrpcStatus.UNAVAILABLE, 'event_backlog_full', 'domain events are waiting to be published; retry the request shortly');
    }
    await sleep(5);
  }
}

/**
 * Where every write that recorded events finishes: wakes the relay and answers only once those events
 * are on the DOMAIN stream, so any service reading that stream can honour read-after-write (the
 * segment service waits for its projection to reach the stream's last sequence). The wait is bounded;
 * when it runs out (NATS down or slow) the write still answers success, because it is committed and
 * the relay publishes it later, but read-after-write for that write cannot hold then.
 */
export async function eventsCommitted(deps: Deps): Promise<void> {
  deps.notify();
  if (deps.awaitPublished) await deps.awaitPublished();
}

export const nowOf = (deps: Deps): string => (deps.now ? deps.now() : new Date().toISOString());
export const newIdOf = (deps: Deps): string => (deps.newId ? deps.newId() : randomUUID());
