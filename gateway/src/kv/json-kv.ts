import { headers, type KV } from 'nats';
import type { AckedPublisher } from '@mailer/nats/client';
import { StoreUnavailable } from '../errors';

/**
 * The small slice of a JetStream KV bucket the gateway uses, with JSON values and an explicit
 * conflict error for compare-and-set. Stores are written against this interface so their logic
 * can be unit-tested on an in-memory map; production passes a real bucket (natsJsonKv).
 */
export interface JsonKv {
  /** The keys that start with `prefix` (a whole-bucket scan: for operator commands, never per request). */
  keys(prefix: string): Promise<string[]>;
  get<T>(key: string): Promise<{ value: T; revision: number } | null>;
  /** Writes only when the key does not exist (or was deleted); throws KvConflict otherwise. */
  create<T>(key: string, value: T): Promise<number>;
  /** Writes only when the key's current revision is `revision`; throws KvConflict otherwise. */
  update<T>(key: string, value: T, revision: number): Promise<number>;
  put<T>(key: string, value: T): Promise<number>;
  /** Deletes; with `revision`, only when that is still the current revision (KvConflict otherwise). */
  delete(key: string, revision?: number): Promise<void>;
}

export class KvConflict extends Error {
  constructor(key: string) {
    super(`concurrent write on ${key}`);
    this.name = 'KvConflict';
  }
}

// JetStream's "wrong last sequence" API error: another writer got there first.
const WRONG_LAST_SEQUENCE = 10071;

function isConflict(err: unknown): boolean {
  const e = err as { api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === WRONG_LAST_SEQUENCE || /wrong last sequence/i.test(e?.message ?? '');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A valid KV key (what nats.js accepts): a malformed subject would make the server drop the connection. */
const VALID_KEY = /^[-/=\w]+(\.[-/=\w]+)*$/;

/**
 * `guard` (the declared JetStream's) fails an operation at once while NATS is disconnected or its
 * buckets are not restored, and one in flight when the connection drops: sent into a dead
 * connection it would only hang until the client's request timeout. Writes go through `publisher`
 * (a publish on the key's subject `$KV.<bucket>.<key>`, as nats.js's KV makes them, without its
 * per-request objects: every rate-limited request writes here), reads through nats.js.
 */
export function natsJsonKv(kv: KV, bucket: string, publisher: AckedPublisher, guard: <R>(op: () => Promise<R>) => Promise<R> = (op) => op()): JsonKv {
  // Conflicts are part of the protocol; every other failure means the store is unreachable or slow.
  const run = async <R>(key: string, op: () => Promise<R>): Promise<R> => {
    try {
      return await guard(op);
    } catch (err) {
      if (isConflict(err)) throw new KvConflict(key);
      throw new StoreUnavailable(`kv ${bucket} ${key}`, err);
    }
  };
  /** Writes the value; with `previousSeq`, only when it is the key's last revision (0: the key has none). */
  const write = (key: string, value: unknown, previousSeq?: number): Promise<number> => {
    if (!VALID_KEY.test(key)) return Promise.reject(new Error(`invalid KV key ${JSON.stringify(key)}`));
    const h = previousSeq === undefined ? undefined : headers();
    h?.set('Nats-Expected-Last-Subject-Sequence', String(previousSeq));
    return run(key, async () => (await publisher.publish(`$KV.${bucket}.${key}`, encoder.encode(JSON.stringify(value)), h)).seq);
  };
  const update = (key: string, value: unknown, revision: number) => {
    if (revision <= 0) return Promise.reject(new Error('a revision is greater than 0'));
    return write(key, value, revision);
  };
  return {
    async keys(prefix) {
      const out: string[] = [];
      for await (const key of await kv.keys(`${prefix}>`)) out.push(key);
      return out;
    },
    async get<T>(key: string) {
      const entry = await run(key, () => kv.get(key));
      // Deletes are tombstones in the stream: a DEL/PURGE entry means "no value".
      if (!entry || entry.operation !== 'PUT' || entry.value.length === 0) return null;
      return { value: JSON.parse(decoder.decode(entry.value)) as T, revision: entry.revision };
    },
    async create(key, value) {
      try {
        return await write(key, value, 0);
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
        // A deleted key (last entry a DEL or PURGE marker) is created again on top of its marker.
        const last = await run(key, () => kv.get(key));
        if (last && last.operation !== 'PUT') return update(key, value, last.revision);
        throw err;
      }
    },
    update,
    put: (key, value) => write(key, value),
    delete: (key, revision) => run(key, () => kv.delete(key, revision === undefined ? undefined : { previousSeq: revision })),
  };
}
