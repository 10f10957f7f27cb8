import { KV, NatsConnection, StorageType } from 'nats';

export interface KvOptions {
  /** Entries expire this long after their last write (0 / unset: never). */
  ttlMs?: number;
  /** Revisions kept per key. Default 1. */
  history?: number;
  /**
   * Direct gets may be answered by any replica of a clustered bucket, including one that lags: set
   * false where a read must see every write acknowledged before it (API-key revocation). Default:
   * the client's default (direct where the server supports it).
   */
  allowDirect?: boolean;
  /** 'memory' for state that may be lost with the NATS server (rate-limit budgets refill). Default file. */
  storage?: 'file' | 'memory';
  /** Copies in a NATS cluster (NATS_REPLICAS). Default 1. */
  replicas?: number;
}

/**
 * Opens a JetStream KV bucket, creating it when missing. An existing bucket is bound as it is: its
 * ttl/history are whatever its creator chose, so every process sharing it (e.g. all gateway replicas
 * reading API-key revocations) sees one consistent state.
 */
export async function openKv(nc: NatsConnection, bucket: string, opts: KvOptions = {}): Promise<KV> {
  return nc.jetstream().views.kv(bucket, {
    ...(opts.ttlMs ? { ttl: opts.ttlMs } : {}),
    ...(opts.history ? { history: opts.history } : {}),
    ...(opts.allowDirect === undefined ? {} : { allow_direct: opts.allowDirect }),
    ...(opts.storage === 'memory' ? { storage: StorageType.Memory } : {}),
    ...(opts.replicas ? { replicas: opts.replicas } : {}),
  });
}
