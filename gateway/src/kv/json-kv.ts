import type { KV } from 'nats';
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

/**
 * `guard` (the declared JetStream's) fails an operation at once while NATS is disconnected or its
 * buckets are not restored, and one in flight when the connection drops: sent into a dead
 * connection it would only hang until the client's request timeout.
 */
export function natsJsonKv(kv: KV, bucket: string, guard: <R>(op: () => Promise<R>) => Promise<R> = (op) => op()): JsonKv {
  // Conflicts are part of the protocol; every other failure means the store is unreachable or slow.
  const run = async <R>(key: string, op: () => Promise<R>): Promise<R> => {
    try {
      return await guard(op);
    } catch (err) {
      if (isConflict(err)) throw new KvConflict(key);
      throw new StoreUnavailable(`kv ${bucket} ${key}`, err);
    }
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
    create: (key, value) => run(key, () => kv.create(key, encoder.encode(JSON.stringify(value)))),
    update: (key, value, revision) => run(key, () => kv.update(key, encoder.encode(JSON.stringify(value)), revision)),
    put: (key, value) => run(key, () => kv.put(key, encoder.encode(JSON.stringify(value)))),
    delete: (key, revision) => run(key, () => kv.delete(key, revision === undefined ? undefined : { previousSeq: revision })),
  };
}
