import {
  DiscardPolicy,
  JetStreamManager,
  NatsConnection,
  RetentionPolicy,
  StorageType,
  StreamConfig,
  nanos,
} from 'nats';
import { apiErrCode, JS_ERR } from './errors';

/** The part of a stream's configuration this project decides; everything else keeps server defaults. */
export interface StreamSpec {
  name: string;
  subjects: string[];
  /** `limits` keeps history for every consumer; `workqueue` removes a message once it is acked. */
  retention: 'limits' | 'workqueue';
  maxAgeMs: number;
  /** Publishes with the same msgID inside this window are stored once. */
  duplicateWindowMs: number;
  /** 1 on a single server; 3 in a clustered production deployment. */
  replicas?: number;
  /** Optional byte cap; oldest messages are discarded beyond it. */
  maxBytes?: number;
  description?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export interface StreamSpecOptions {
  /** History kept in EVENTS and DOMAIN, so a new projection can be rebuilt from it. Default 30 days. */
  retentionDays?: number;
  /** Upper bound for work nobody picked up (a consumer missing for days). Default 7 days. */
  jobsRetentionDays?: number;
  duplicateWindowMs?: number;
  replicas?: number;
}

/** Builds the project's stream definitions; processes pass configured values, STREAMS holds the defaults. */
export function streamSpecs(opts: StreamSpecOptions = {}): { EVENTS: StreamSpec; DOMAIN: StreamSpec; JOBS: StreamSpec } {
  const maxAgeMs = (opts.retentionDays ?? 30) * DAY_MS;
  // The outbox relay may re-publish after a crash; the window has to outlast a relay restart by far.
  const duplicateWindowMs = opts.duplicateWindowMs ?? 10 * 60 * 1000;
  const replicas = opts.replicas ?? 1;
  return {
    EVENTS: {
      name: 'EVENTS',
      subjects: ['events.>'],
      retention: 'limits',
      maxAgeMs,
      duplicateWindowMs,
      replicas,
      description: 'Custom events posted to /events; subject events.<accountId>',
    },
    DOMAIN: {
      name: 'DOMAIN',
      subjects: ['domain.>'],
      retention: 'limits',
      maxAgeMs,
      duplicateWindowMs,
      replicas,
      description: 'Domain facts; subject domain.<aggregate>.<event>',
    },
    JOBS: {
      name: 'JOBS',
      subjects: ['jobs.>'],
      retention: 'workqueue',
      maxAgeMs: (opts.jobsRetentionDays ?? 7) * DAY_MS,
      duplicateWindowMs,
      replicas,
      description: 'Work items (email sends, webhook deliveries); removed once acked',
    },
  };
}

export const STREAMS = streamSpecs();

export function streamConfig(spec: StreamSpec): Partial<StreamConfig> & { name: string } {
  return {
    name: spec.name,
    description: spec.description,
    subjects: spec.subjects,
    retention: spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(spec.maxAgeMs),
    duplicate_window: nanos(Math.min(spec.duplicateWindowMs, spec.maxAgeMs)),
    num_replicas: spec.replicas ?? 1,
    max_bytes: spec.maxBytes ?? -1,
  };
}

function differs(want: Partial<StreamConfig>, have: StreamConfig): boolean {
  for (const [key, value] of Object.entries(want)) {
    const current = (have as unknown as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      if (!Array.isArray(current) || [...value].sort().join('\n') !== [...current].sort().join('\n')) return true;
    } else if (value !== current) {
      return true;
    }
  }
  return false;
}

/**
 * Creates each stream or brings an existing one to the spec. Every process calls this at start-up, so
 * it must be safe when several run it at the same moment: losing the create race is not an error,
 * and an update with an unchanged config is skipped.
 */
export async function ensureStreams(nc: NatsConnection, specs: StreamSpec[] = Object.values(STREAMS)): Promise<void> {
  const jsm = await nc.jetstreamManager();
  for (const spec of specs) await ensureStream(jsm, spec);
}

async function ensureStream(jsm: JetStreamManager, spec: StreamSpec): Promise<void> {
  const want = streamConfig(spec);
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await jsm.streams.info(spec.name);
      if (differs(want, info.config)) await jsm.streams.update(spec.name, want);
      return;
    } catch (err) {
      const code = apiErrCode(err);
      if (code === JS_ERR.STREAM_NOT_FOUND) {
        try {
          await jsm.streams.add(want);
          return;
        } catch (addErr) {
          // Another process created it between our info and add: loop once more to compare and update.
          if (apiErrCode(addErr) === JS_ERR.STREAM_NAME_IN_USE && attempt < 3) continue;
          throw wrap(spec, 'create', addErr);
        }
      }
      throw wrap(spec, 'update', err);
    }
  }
}

function wrap(spec: StreamSpec, action: string, err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  // Changes the server refuses (e.g. retention policy) need an operator: say which stream and why.
  return new Error(`cannot ${action} JetStream stream ${spec.name} (${spec.subjects.join(', ')}): ${message}`);
}
