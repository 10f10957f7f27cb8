import { KvConflict, type JsonKv } from '../../src/kv/json-kv';

/**
 * JsonKv on a Map with JetStream's revision semantics (one global sequence, CAS on the key's
 * last revision). Every operation yields to the event loop first, so concurrent callers really
 * interleave as they would over the network.
 */
export function memoryKv(): JsonKv & { dump(): Map<string, { value: string; revision: number }> } {
  const data = new Map<string, { value: string; revision: number }>();
  let seq = 0;
  const tick = () => new Promise<void>((r) => setImmediate(r));
  return {
    async keys(prefix) {
      await tick();
      return [...data.keys()].filter((k) => k.startsWith(prefix));
    },
    async get<T>(key: string) {
      await tick();
      const e = data.get(key);
      return e ? { value: JSON.parse(e.value) as T, revision: e.revision } : null;
    },
    async create(key, value) {
      await tick();
      if (data.has(key)) throw new KvConflict(key);
      data.set(key, { value: JSON.stringify(value), revision: ++seq });
      return seq;
    },
    async update(key, value, revision) {
      await tick();
      if (data.get(key)?.revision !== revision) throw new KvConflict(key);
      data.set(key, { value: JSON.stringify(value), revision: ++seq });
      return seq;
    },
    async put(key, value) {
      await tick();
      data.set(key, { value: JSON.stringify(value), revision: ++seq });
      return seq;
    },
    async delete(key, revision) {
      await tick();
      if (revision !== undefined && data.get(key)?.revision !== revision) throw new KvConflict(key);
      data.delete(key);
    },
    dump: () => data,
  };
}
