import type { KV, NatsConnection } from 'nats';
import { NatsUnavailable } from './errors';
import { openKv, type KvOptions } from './kv';
import { errorInfo, type Log, silent } from './log';
import { ensureStreams, type StreamSpec } from './streams';

/** The streams and KV buckets a process needs to exist before it can serve. */
export interface JetStreamDeclarations {
  streams?: StreamSpec[];
  buckets?: Array<{ name: string } & KvOptions>;
}

export interface DeclaredJetStream {
  /** The bucket declared under this name (the handle stays valid when the bucket is re-created). */
  kv(name: string): KV;
  /**
   * True while connected and, since the last (re)connect, every declared stream and bucket exists
   * and every `onRestored` hook has run: what readiness probes report.
   */
  ready(): boolean;
  /**
   * Runs a NATS operation that a caller waits for (a KV read, a publish awaiting its PubAck) only
   * while `ready()`: otherwise it fails at once with NatsUnavailable, and so does an operation still
   * waiting when the connection drops. The client would hold either until its request timeout (5 s)
   * and only then fail, while nothing can answer it.
   */
  guard<T>(op: () => Promise<T>): Promise<T>;
  /**
   * Runs after every reconnect, once the declarations exist again (e.g. to restart KV watches, whose
   * bucket may have been re-created empty). `ready()` stays false until it resolved.
   */
  onRestored(hook: () => Promise<void>): void;
  close(): void;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2_000;

/**
 * Creates (or brings to spec) the declared streams and buckets now, and again after every reconnect.
 *
 * A NATS restart loses memory-stored streams (e.g. the gateway's rate-limit budgets) while file-stored
 * ones survive; a process that ensured its streams only at start would then fail every operation on
 * the lost ones for good. Re-ensuring after each reconnect (idempotent, and safe when replicas race)
 * makes every process heal by itself once NATS is back. Fails at start like ensureStreams.
 */
export async function declareJetStream(nc: NatsConnection, decl: JetStreamDeclarations, opts: { log?: Log } = {}): Promise<DeclaredJetStream> {
  const log = opts.log ?? silent;
  const kvs = new Map<string, KV>();
  const hooks: Array<() => Promise<void>> = [];
  let connected = true;
  let restored = false;
  let closed = false;
  // Each reconnect starts a new restoration; an older one still retrying gives up.
  let generation = 0;
  // The rejecters of the guarded operations in flight, failed at once on a disconnect.
  const inFlight = new Set<(err: Error) => void>();
  const ready = () => !closed && connected && restored && !nc.isClosed();

  const ensureAll = async () => {
    if (decl.streams?.length) await ensureStreams(nc, decl.streams);
    for (const { name, ...kvOpts } of decl.buckets ?? []) kvs.set(name, await openKv(nc, name, kvOpts));
  };

  const restore = async (gen: number) => {
    let delay = FIRST_RETRY_MS;
    while (!closed && !nc.isClosed() && gen === generation) {
      try {
        await ensureAll();
        for (const hook of hooks) await hook();
        if (gen !== generation) return;
        restored = true;
        log('nats streams and buckets restored', {});
        return;
      } catch (err) {
        log('cannot restore nats streams and buckets yet; retrying', { retryInMs: delay, ...errorInfo(err) });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
  };

  await ensureAll();
  restored = true;

  (async () => {
    for await (const s of nc.status()) {
      if (closed) break;
      if (s.type === 'disconnect') {
        connected = false;
        restored = false;
        generation++;
        const lost = new NatsUnavailable('the NATS connection was lost');
        for (const reject of inFlight) reject(lost);
        inFlight.clear();
      } else if (s.type === 'reconnect') {
        connected = true;
        restored = false;
        void restore(++generation);
      }
    }
  })().catch(() => {
    // the status iterator ends with the connection
  });

  return {
    kv(name) {
      const kv = kvs.get(name);
      if (!kv) throw new Error(`KV bucket ${name} was not declared`);
      return kv;
    },
    ready,
    guard<T>(op: () => Promise<T>): Promise<T> {
      if (!ready()) return Promise.reject(new NatsUnavailable('NATS is not available'));
      return new Promise<T>((resolve, reject) => {
        inFlight.add(reject);
        const settle = () => inFlight.delete(reject);
        new Promise<T>((r) => r(op())).then(
          (value) => (settle(), resolve(value)),
          (err: unknown) => (settle(), reject(err)),
        );
      });
    },
    onRestored: (hook) => void hooks.push(hook),
    close() {
      closed = true;
      generation++;
    },
  };
}
