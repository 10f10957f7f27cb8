/**
 * The contact projection consumer: a durable pull consumer on DOMAIN that applies subscriber and
 * catalog events to the segment service's contacts (store/contacts.ts holds the ordering rules).
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
import { runConsumer, type ConsumedMessage, type ConsumerHandle, type HandlerResult } from '@mailer/nats';
import { ContactProjection, MalformedEventError } from '../store/contacts';

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
  projection: ContactProjection;
  durable: string;
  concurrency?: number;
  logger?: ProjectionLogger;
  counter?: ProjectionCounter;
  backoffMs?: number[];
}

/** One filter for everything the projection reads (nats-server 2.9 has no multi-subject filters). */
export const PROJECTION_FILTER = 'domain.>';

export function projectionHandler(opts: Pick<ProjectionOptions, 'projection' | 'logger' | 'counter'>) {
  return async (msg: ConsumedMessage): Promise<HandlerResult> => {
    const type = typeof msg.data?.type === 'string' ? msg.data.type : msg.subject.replace(/^domain\./, '');
    try {
      const outcome = await opts.projection.apply(msg.data, msg.seq);
      opts.counter?.inc({ type, outcome });
      return 'ack';
    } catch (err) {
      if (err instanceof MalformedEventError) {
        opts.logger?.error({ seq: msg.seq, subject: msg.subject, err: err.message }, 'terminating malformed domain event');
        opts.counter?.inc({ type, outcome: 'malformed' });
        return 'term';
      }
      opts.counter?.inc({ type, outcome: 'error' });
      throw err; // store error: nak with backoff (runConsumer)
    }
  };
}

export function startProjection(opts: ProjectionOptions): ConsumerHandle {
  const handle = runConsumer(opts.nc, {
    stream: 'DOMAIN',
    durable: opts.durable,
    filterSubject: PROJECTION_FILTER,
    concurrency: opts.concurrency ?? 8,
    ...(opts.backoffMs ? { backoffMs: opts.backoffMs } : {}),
    handler: projectionHandler(opts),
    log: (msg, extra) => opts.logger?.warn(extra ?? {}, msg),
  });
  opts.logger?.info({ durable: opts.durable, filter: PROJECTION_FILTER }, 'contact projection started');
  return handle;
}
