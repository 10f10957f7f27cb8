import type { Collection, Store } from '@mailer/store';
import { Counter, Histogram, type Registry } from 'prom-client';

const OPERATIONS = [
  'findOne',
  'find',
  'countDocuments',
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'findOneAndUpdate',
  'deleteOne',
  'deleteMany',
  'bulkWrite',
  'aggregate',
] as const;

/**
 * The same store, with every collection operation timed into
 * `store_operation_duration_seconds{collection, operation, outcome}` (the dashboard's store panel).
 * Wrapping here keeps the store package free of metrics and every service measured alike.
 */
export function instrumentStore(store: Store, registry: Registry): Store {
  const seconds = new Histogram({
    name: 'store_operation_duration_seconds',
    help: 'Store operation latency by collection and operation',
    labelNames: ['collection', 'operation', 'outcome'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  // The embedded store's write amplification (commits and documents written per unit of work).
  const stats = store.stats?.bind(store);
  if (stats) {
    const total = (name: string, help: string, key: 'commits' | 'documentWrites') =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(stats()[key]);
        },
      });
    total('store_commits_total', 'Transactions the embedded store committed (group commits and store.transaction)', 'commits');
    total('store_document_writes_total', 'Documents the embedded store inserted, replaced or deleted', 'documentWrites');
  }
  const wrapped = new Map<string, Collection<any>>();
  return Object.assign(Object.create(store) as Store, {
    collection<T extends { _id: string }>(name: string, schema: Parameters<Store['collection']>[1], options?: Parameters<Store['collection']>[2]): Collection<T> {
      const inner = store.collection<T>(name, schema, options); // checks a second opening's schema and options
      const cached = wrapped.get(name);
      if (cached) return cached as Collection<T>;
      const outer = Object.create(inner) as Collection<T>;
      for (const op of OPERATIONS) {
        const method = (inner[op] as (...args: unknown[]) => Promise<unknown>).bind(inner);
        (outer as unknown as Record<string, unknown>)[op] = async (...args: unknown[]) => {
          const stop = seconds.startTimer({ collection: name, operation: op });
          try {
            const result = await method(...args);
            stop({ outcome: 'ok' });
            return result;
          } catch (err) {
            stop({ outcome: 'error' });
            throw err;
          }
        };
      }
      wrapped.set(name, outer);
      return outer;
    },
    transaction: store.transaction.bind(store),
    ping: store.ping.bind(store),
    ...(stats ? { stats } : {}),
    close: store.close.bind(store),
  });
}
