/**
 * The contact projection consumer: a durable pull consumer on DOMAIN that hands subscriber, catalog and
 * engagement events to the use case that applies them to the segment service's contacts
 * (app/project-contacts.ts; store/contacts.ts holds the ordering rules).
 *
 * Progress is the durable consumer's ack floor: an event is acked only after the store write, so a
 * restarted segment service resumes where it stopped and loses nothing (a redelivered event is a
 * no-op thanks to versions). Rebuild: events carry the subscriber's full state, so a new instance with
 * an empty store and a new durable name (SEGMENT_PROJECTION_DURABLE) replays the stream from the start
 * and reaches the same contacts. DOMAIN keeps 30 days (streamSpecs retentionDays): a rebuild from the
 * stream alone is complete only while every subscriber's latest event and every catalog deletion is
 * younger than that; older ones need a snapshot or a re-emit from the subscriber service.
 */
import type { NatsConnection } from 'nats';
import { Gauge, type Registry } from '@mailer/kit';
import { readAfterWrite, runConsumer, type AppliedWatermark, type BatchHandlerResult, type ConsumedMessage, type ConsumerHandle, type HandlerResult } from '@mailer/nats';
import { applyContactEvent, applyContactEvents, type ProjectContactsDeps } from '../app/project-contacts';
import { MalformedEventError } from './facts';
import { NATS_ACCESS } from '../nats-access';

export interface ProjectionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ProjectionCounter {
  inc(labels: { type: string; outcome: string }): void;
}

export interface ProjectionOptions {
  nc: NatsConnection;
  projection: ProjectContactsDeps['projection'];
  durable: string;
  /** Batches in flight (events of one account are applied one batch at a time, in stream order). */
  concurrency?: number;
  /** Most events per batch (one read and one write per batch, see ContactProjection.applyFacts). Default 512. */
  batchSize?: number;
  logger?: ProjectionLogger;
  counter?: ProjectionCounter;
  backoffMs?: number[];
  /** When given, `segment_projection_applied_sequence` (the applied watermark) is registered on it. */
  registry?: Registry;
}

/** One filter for everything the projection reads (nats-server 2.9 has no multi-subject filters). */
export const PROJECTION_FILTER = NATS_ACCESS.consumers.projection.filterSubject;

/** The applied watermark moved to @mailer/nats (readAfterWrite); re-exported for existing imports. */
export { AppliedWatermark } from '@mailer/nats';

/** An event's type for the metrics: its `type` member, else its subject without `domain.`. */
const typeOf = (msg: ConsumedMessage): string => (typeof msg.data?.type === 'string' ? msg.data.type : msg.subject.replace(/^domain\./, ''));

export function projectionHandler(opts: Pick<ProjectionOptions, 'projection' | 'logger' | 'counter'> & { watermark?: AppliedWatermark }) {
  return async (msg: ConsumedMessage): Promise<HandlerResult> => {
    const type = typeOf(msg);
    try {
      const outcome = await applyContactEvent(opts, msg.data, msg.seq);
      opts.counter?.inc({ type, outcome });
      opts.watermark?.complete(msg.seq);
      return 'ack';
    } catch (err) {
      if (err instanceof MalformedEventError) {
        opts.logger?.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed domain event');
        opts.counter?.inc({ type, outcome: 'malformed' });
        opts.watermark?.complete(msg.seq);
        return 'term';
      }
      opts.counter?.inc({ type, outcome: 'error' });
      throw err; // store error: nak with backoff (runConsumer)
    }
  };
}

/**
 * Applies a batch of DOMAIN events (stream order) with applyContactEvents: malformed events
 * are terminated, the others acked once the batch's write is durable. When the batch fails (a store
 * error), its events are retried one by one so that only the failing ones are nak'ed with backoff.
 */
export function projectionBatchHandler(opts: Pick<ProjectionOptions, 'projection' | 'logger' | 'counter'> & { watermark?: AppliedWatermark }) {
  const single = projectionHandler(opts);
  return async (msgs: ConsumedMessage[]): Promise<BatchHandlerResult[]> => {
    let outcomes;
    try {
      outcomes = await applyContactEvents(opts, msgs.map((m) => ({ data: m.data, seq: m.seq })));
    } catch (err) {
      opts.logger?.warn({ events: msgs.length, err: err instanceof Error ? err.message : String(err) }, 'projection batch failed; applying its events one by one');
      const results: BatchHandlerResult[] = [];
      for (const m of msgs) results.push(await single(m).catch((error: unknown) => ({ error })));
      return results;
    }
    return msgs.map((msg, i) => {
      const outcome = outcomes[i];
      const type = typeOf(msg);
      opts.watermark?.complete(msg.seq);
      if (outcome instanceof MalformedEventError) {
        opts.logger?.error({ seq: msg.seq, subject: msg.subject, err: outcome.message }, 'terminating malformed domain event');
        opts.counter?.inc({ type, outcome: 'malformed' });
        return 'term';
      }
      opts.counter?.inc({ type, outcome });
      return 'ack';
    });
  };
}

export interface ProjectionHandle extends ConsumerHandle {
  /** The applied watermark (see AppliedWatermark). */
  readonly watermark: AppliedWatermark;
  /**
   * Waits until every DOMAIN message up to `seq` is applied (or deliberately skipped): true, or false
   * after `timeoutMs`. The local watermark answers at once when it is there; otherwise the durable
   * consumer's ack floor is read every SYNC_MS (it covers gaps and other replicas' work).
   */
  waitForSequence(seq: number, timeoutMs: number): Promise<boolean>;
  /** The DOMAIN stream's last sequence now: what a read must wait for to see every published write. */
  streamTail(): Promise<number>;
}

export function startProjection(opts: ProjectionOptions): ProjectionHandle {
  const reads = readAfterWrite({ nc: opts.nc, stream: 'DOMAIN', durable: opts.durable });
  const { watermark } = reads;
  if (opts.registry) {
    new Gauge({
      name: 'segment_projection_applied_sequence',
      help: 'DOMAIN stream sequence up to which the contact projection has applied every event (the read-after-write watermark)',
      registers: [opts.registry],
      collect() {
        this.set(watermark.value);
      },
    });
  }

  const handle = runConsumer(opts.nc, {
    ...NATS_ACCESS.consumers.projection,
    durable: opts.durable,
    concurrency: opts.concurrency ?? 8,
    batchSize: opts.batchSize ?? 512,
    ...(opts.backoffMs ? { backoffMs: opts.backoffMs } : {}),
    batchHandler: projectionBatchHandler({ ...opts, watermark }),
    log: (msg, extra) => opts.logger?.warn(extra ?? {}, msg),
  });
  opts.logger?.info({ durable: opts.durable, filter: PROJECTION_FILTER }, 'contact projection started');
  return {
    ...handle,
    async stop() {
      reads.stop();
      await handle.stop();
    },
    watermark,
    waitForSequence: reads.waitForSequence,
    streamTail: reads.streamTail,
  };
}
