import { context } from '@opentelemetry/api';
import {
  AckPolicy,
  Consumer,
  ConsumerConfig,
  ConsumerMessages,
  DeliverPolicy,
  JetStreamManager,
  JsMsg,
  NatsConnection,
  ReplayPolicy,
  nanos,
} from 'nats';
import { apiErrCode, JS_ERR } from './errors';
import { errorInfo, Log, silent } from './log';
import { decodeJson, extractTraceContext, headersToRecord } from './publish';

/** What the handler decided: done, never retry (poison), or retry later. */
export type HandlerResult = 'ack' | 'term' | { nakDelayMs: number };
/**
 * A batch handler's verdict on one message: a HandlerResult, or `{ error }` for a failure that is
 * retried like a throwing single handler (nak with the backoff of this delivery, term after maxDeliver).
 */
export type BatchHandlerResult = HandlerResult | { error: unknown };

export interface ConsumedMessage {
  subject: string;
  /** The JSON-decoded payload; `any` because each consumer validates the shape it expects. */
  data: any;
  headers: Record<string, string>;
  /** Stream sequence: stable across redeliveries. */
  seq: number;
  /** 1 on first delivery. */
  deliveryCount: number;
  /** The publisher's de-duplication id, the natural key for recording processed messages. */
  msgID?: string;
}

export interface ConsumerOptions {
  stream: string;
  durable: string;
  filterSubject?: string;
  /** Handlers in flight at once in this process. Default 8. */
  concurrency?: number;
  /** Deliveries before a message is given up (terminated). Default 10; unlimited is not allowed. */
  maxDeliver?: number;
  /** Retry delay after the n-th failed delivery is backoffMs[n-1]; the last entry repeats. */
  backoffMs?: number[];
  /** How long the server waits for an ack before redelivering (e.g. the process died). Default 30 s. */
  ackWaitMs?: number;
  /** One message at a time (`concurrency` in flight). Exactly one of handler / batchHandler. */
  handler?: (msg: ConsumedMessage) => Promise<HandlerResult>;
  /**
   * Batch mode: messages are handed over in stream order, in arrays of up to `batchSize`, and
   * `concurrency` counts batches in flight. The handler returns one result per message (same order);
   * when it throws, every message of the batch is retried. A batch is formed from what has arrived
   * when the previous one is dispatched (no waiting for it to fill), so a trickle is handled at once.
   */
  batchHandler?: (msgs: ConsumedMessage[]) => Promise<BatchHandlerResult[]>;
  /** Batch mode: most messages per batch. Default 256. */
  batchSize?: number;
  log?: Log;
}

/** A durable consumer's backlog, as the server reports it (consumer info). */
export interface ConsumerCounts {
  /** Not delivered yet. */
  pending: number;
  /** Delivered and not acknowledged yet (in a handler, or waiting for a retry). */
  ackPending: number;
  /** Delivered more than once and not acknowledged yet. */
  redelivered: number;
}

export interface ConsumerHandle {
  readonly stream: string;
  readonly durable: string;
  /** Stops pulling, waits for in-flight handlers to finish and settle their messages. */
  stop(): Promise<void>;
  /** Messages not yet processed: never delivered plus delivered-but-unacked (incl. waiting for retry). */
  lag(): Promise<number>;
  /** The server's counts for this consumer (one consumer-info request, once the consumer exists). */
  counts(): Promise<ConsumerCounts>;
}

// The consumers this process runs, for metrics (each process exports the backlog of what it consumes).
const running = new Set<ConsumerHandle>();

/** The consumers running in this process (started by runConsumer, not stopped yet). */
export function runningConsumers(): ConsumerHandle[] {
  return [...running];
}

const DEFAULT_BACKOFF_MS = [1_000, 5_000, 30_000, 60_000, 300_000];
// A pull request lives this long when idle. Short enough that a server restart or a re-created
// consumer is noticed quickly, long enough not to poll the server busily.
const FETCH_EXPIRES_MS = 5_000;
const MAX_RETRY_MS = 5_000;
const READY_TIMEOUT_MS = 10_000;

export function consumerConfig(opts: ConsumerOptions): Partial<ConsumerConfig> & { durable_name: string } {
  // No server-side `backoff`: on nats-server 2.9 it shifts explicit nak delays by
  // (backoff[n-1] - ack_wait), so the retry schedule is applied by the client through nak(delay) only,
  // and ack_wait alone governs redelivery after a crash.
  return {
    durable_name: opts.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    ack_wait: nanos(opts.ackWaitMs ?? 30_000),
    max_deliver: opts.maxDeliver ?? 10,
    ...(opts.filterSubject ? { filter_subject: opts.filterSubject } : {}),
  };
}

function validate(opts: ConsumerOptions): void {
  const { concurrency = 8, maxDeliver = 10, backoffMs = DEFAULT_BACKOFF_MS, ackWaitMs = 30_000 } = opts;
  const fail = (what: string) => {
    throw new Error(`runConsumer(${opts.stream}/${opts.durable}): ${what}`);
  };
  if (!Number.isInteger(concurrency) || concurrency < 1) fail(`concurrency must be a positive integer, got ${concurrency}`);
  // Unlimited redelivery turns one poison message into an endless loop; always cap it.
  if (!Number.isInteger(maxDeliver) || maxDeliver < 1) fail(`maxDeliver must be a positive integer, got ${maxDeliver}`);
  if (backoffMs.length === 0 || backoffMs.some((d) => !(d >= 0))) fail('backoffMs must be a non-empty list of delays >= 0');
  if (!(ackWaitMs >= 1_000)) fail(`ackWaitMs must be >= 1000, got ${ackWaitMs}`);
  if ((typeof opts.handler === 'function') === (typeof opts.batchHandler === 'function')) fail('exactly one of handler and batchHandler is required');
  const { batchSize = 256 } = opts;
  if (!Number.isInteger(batchSize) || batchSize < 1) fail(`batchSize must be a positive integer, got ${batchSize}`);
}

function differs(want: Partial<ConsumerConfig>, have: ConsumerConfig): boolean {
  return (
    want.ack_wait !== have.ack_wait ||
    want.max_deliver !== have.max_deliver ||
    want.ack_policy !== have.ack_policy ||
    (want.filter_subject ?? '') !== (have.filter_subject ?? '') ||
    (have.backoff?.length ?? 0) > 0
  );
}

/** Create-or-update of the durable consumer; racing replicas converge on the same config. */
async function ensureConsumer(jsm: JetStreamManager, stream: string, want: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let have: ConsumerConfig | undefined;
    try {
      have = (await jsm.consumers.info(stream, want.durable_name)).config;
    } catch (err) {
      if (apiErrCode(err) !== JS_ERR.CONSUMER_NOT_FOUND) throw err;
    }
    if (!have) {
      try {
        await jsm.consumers.add(stream, want);
        return;
      } catch (err) {
        // Lost a creation race to another replica: look again and update if needed.
        if (attempt < 3) continue;
        throw err;
      }
    }
    if (!differs(want, have)) return;
    if (have.filter_subject && !want.filter_subject) {
      throw new Error(
        `consumer ${stream}/${want.durable_name} filters on ${have.filter_subject}; removing a filter needs the consumer deleted first`,
      );
    }
    // Spread the existing config so fields we do not manage survive, then drop a server-side backoff
    // left by an older deployment (see consumerConfig for why it must not be set).
    await jsm.consumers.update(stream, want.durable_name, { ...want, backoff: [] } as Partial<ConsumerConfig>);
    return;
  }
}

/**
 * Runs a durable pull consumer with explicit acks.
 *
 * Each pull asks for exactly as many messages as there are free handler slots, so the number of
 * handlers in flight never exceeds `concurrency` and no message sits in a client-side buffer while its
 * ack timer runs. A handler that throws gets `nak(backoff for this delivery)`; on the last allowed
 * delivery the message is terminated instead, so it does not linger as pending forever.
 */
export function runConsumer(nc: NatsConnection, opts: ConsumerOptions): ConsumerHandle {
  validate(opts);
  const log = opts.log ?? silent;
  const concurrency = opts.concurrency ?? 8;
  const maxDeliver = opts.maxDeliver ?? 10;
  const backoffMs = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
  const ackWaitMs = opts.ackWaitMs ?? 30_000;
  const batchHandler = opts.batchHandler;
  const batchSize = opts.batchSize ?? 256;
  // Most messages received and not yet settled: single mode, one per handler slot; batch mode,
  // `concurrency` full batches (the next batch is being received while the current ones run).
  const capacity = batchHandler ? concurrency * batchSize : concurrency;
  const want = consumerConfig(opts);
  const where = { stream: opts.stream, durable: opts.durable };

  let stopping = false;
  let activeBatch: ConsumerMessages | undefined;
  const inFlight = new Set<Promise<void>>();
  let wakeLoop: (() => void) | undefined;
  const wake = () => {
    const w = wakeLoop;
    wakeLoop = undefined;
    w?.();
  };
  // Resolves early when stop() or a finishing handler calls wake().
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wakeLoop = () => {
        clearTimeout(t);
        resolve();
      };
    });

  let jsmPromise: Promise<JetStreamManager> | undefined;
  const jsm = () => (jsmPromise ??= nc.jetstreamManager().catch((err) => {
    jsmPromise = undefined;
    throw err;
  }));

  // A pull request sent while disconnected is queued by the client and reaches the server only at
  // reconnect, after the client's own timer for it may have run out: a message the server hands to
  // it waits for ack_wait before redelivery. So no pull is sent while the connection is down.
  let connected = true;
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') connected = false;
      else if (s.type === 'reconnect') {
        connected = true;
        wake();
      }
    }
  })()
    .catch(() => undefined)
    .finally(wake); // the status iterator ends with the connection: let the loop see it closed

  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const delayFor = (deliveryCount: number) => backoffMs[Math.min(deliveryCount, backoffMs.length) - 1];

  async function settle(m: JsMsg, result: HandlerResult, deliveryCount: number): Promise<void> {
    if (result === 'ack') {
      // Wait for the server to confirm: after stop() resolves, an acked message must not come back.
      const ok = await m.ackAck().catch(() => false);
      if (!ok) log('ack not confirmed; message may be redelivered', { ...where, seq: m.seq });
    } else if (result === 'term') {
      m.term();
    } else if (deliveryCount >= maxDeliver) {
      log('giving up on message after max deliveries', { ...where, seq: m.seq, deliveryCount, maxDeliver });
      m.term();
    } else {
      m.nak(Math.max(0, result.nakDelayMs));
    }
  }

  /** The message as handlers see it; undefined (and terminated) when it is not JSON. */
  function decode(m: JsMsg): ConsumedMessage | undefined {
    const headers = headersToRecord(m.headers);
    let data: unknown;
    try {
      data = decodeJson(m.data);
    } catch (err) {
      // Undecodable input never becomes decodable: terminate instead of retrying.
      log('terminating message that is not JSON', { ...where, seq: m.seq, ...errorInfo(err) });
      m.term();
      return undefined;
    }
    return { subject: m.subject, data, headers, seq: m.seq, deliveryCount: m.info.deliveryCount, msgID: headers['Nats-Msg-Id'] };
  }

  async function handle(m: JsMsg): Promise<void> {
    const msg = decode(m);
    if (!msg) return;
    const { headers, deliveryCount } = msg;
    const handler = opts.handler!;
    // Long handlers tell the server they are alive so the message is not redelivered mid-work.
    const keepAlive = setInterval(() => {
      try {
        m.working();
      } catch {
        // connection gone; the message will be redelivered after ack_wait
      }
    }, Math.max(500, Math.floor(ackWaitMs / 2)));
    let result: HandlerResult;
    try {
      result = await context.with(extractTraceContext(headers), () => handler(msg));
      if (!isHandlerResult(result)) throw new Error(`handler returned ${JSON.stringify(result)}, expected 'ack' | 'term' | { nakDelayMs }`);
    } catch (err) {
      result = { nakDelayMs: delayFor(deliveryCount) };
      const retryInMs = deliveryCount < maxDeliver ? result.nakDelayMs : undefined; // undefined: giving up (see settle)
      log('handler failed', { ...where, seq: m.seq, deliveryCount, maxDeliver, retryInMs, ...errorInfo(err) });
    } finally {
      clearInterval(keepAlive);
    }
    try {
      await settle(m, result, deliveryCount);
    } catch (err) {
      log('could not settle message; it will be redelivered after ack_wait', { ...where, seq: m.seq, ...errorInfo(err) });
    }
  }

  function dispatch(m: JsMsg): void {
    const p: Promise<void> = handle(m)
      .catch((err) => log('unexpected consumer error', { ...where, ...errorInfo(err) }))
      .finally(() => {
        inFlight.delete(p);
        wake();
      });
    inFlight.add(p);
  }

  // ---- batch mode ----
  const queue: Array<{ m: JsMsg; msg: ConsumedMessage }> = [];
  /** Batch mode: messages received (queued or in a running batch) and not yet settled. */
  let held = 0;
  let flushScheduled = false;

  function enqueue(m: JsMsg): void {
    const msg = decode(m);
    if (!msg) return;
    queue.push({ m, msg });
    held++;
    // Dispatch once what arrived together has been read (a pull's messages come in bursts).
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  }

  /** Starts batches from the queue while batch slots are free. */
  function flush(): void {
    flushScheduled = false;
    while (queue.length > 0 && inFlight.size < concurrency) {
      const items = queue.splice(0, batchSize);
      const p: Promise<void> = handleBatch(items)
        .catch((err) => log('unexpected consumer error', { ...where, ...errorInfo(err) }))
        .finally(() => {
          inFlight.delete(p);
          held -= items.length;
          wake();
          flush();
        });
      inFlight.add(p);
    }
  }

  async function handleBatch(items: Array<{ m: JsMsg; msg: ConsumedMessage }>): Promise<void> {
    const keepAlive = setInterval(() => {
      for (const { m } of items) {
        try {
          m.working();
        } catch {
          // connection gone; the messages will be redelivered after ack_wait
        }
      }
    }, Math.max(500, Math.floor(ackWaitMs / 2)));
    let results: BatchHandlerResult[];
    try {
      results = await batchHandler!(items.map((i) => i.msg));
      if (!Array.isArray(results) || results.length !== items.length || !results.every(isBatchHandlerResult)) {
        throw new Error(`batch handler returned ${Array.isArray(results) ? `${results.length} results for ${items.length} messages` : typeof results}, expected one 'ack' | 'term' | { nakDelayMs } | { error } per message`);
      }
    } catch (err) {
      results = items.map(() => ({ error: err }));
    } finally {
      clearInterval(keepAlive);
    }
    const acks: JsMsg[] = [];
    const failed: number[] = [];
    let firstError: unknown;
    items.forEach(({ m, msg }, i) => {
      let result = results[i];
      if (typeof result === 'object' && 'error' in result) {
        if (failed.length === 0) firstError = result.error;
        failed.push(m.seq);
        result = { nakDelayMs: delayFor(msg.deliveryCount) };
      }
      if (result === 'ack') acks.push(m);
      else {
        // term / nak: fire-and-forget publishes, nothing to wait for
        settle(m, result, msg.deliveryCount).catch((err) =>
          log('could not settle message; it will be redelivered after ack_wait', { ...where, seq: m.seq, ...errorInfo(err) }),
        );
      }
    });
    if (failed.length > 0) log('handler failed', { ...where, failed: failed.length, seqs: failed.slice(0, 10), maxDeliver, ...errorInfo(firstError) });
    if (acks.length === 0) return;
    // One connection's acks are processed by the server in order: confirming the last one confirms
    // them all (after stop() resolves, an acked message must not come back).
    const last = acks.pop()!;
    try {
      for (const m of acks) m.ack();
      const ok = await last.ackAck().catch(() => false);
      if (!ok) log('acks not confirmed; messages may be redelivered', { ...where, seqs: [acks[0]?.seq ?? last.seq, last.seq] });
    } catch (err) {
      log('could not ack messages; they will be redelivered after ack_wait', { ...where, ...errorInfo(err) });
    }
  }

  const loop = (async () => {
    let consumer: Consumer | undefined;
    let retryMs = 250;
    while (!stopping && !nc.isClosed()) {
      try {
        if (!consumer) {
          const m = await jsm();
          await ensureConsumer(m, opts.stream, want);
          consumer = await nc.jetstream().consumers.get(opts.stream, opts.durable);
          markReady();
        }
        const busy = () => (batchHandler ? held : inFlight.size);
        while ((busy() >= capacity || !connected) && !stopping) await pause(60_000);
        if (stopping) break;
        const batch = await consumer.fetch({ max_messages: capacity - busy(), expires: FETCH_EXPIRES_MS });
        activeBatch = batch;
        if (stopping) await batch.close();
        // Messages already received when stop() closes the batch are still yielded and handled.
        for await (const m of batch) {
          if (batchHandler) enqueue(m);
          else dispatch(m);
        }
        activeBatch = undefined;
        retryMs = 250;
      } catch (err) {
        activeBatch = undefined;
        if (stopping || nc.isClosed()) break;
        const code = apiErrCode(err);
        const msg = err instanceof Error ? err.message : '';
        // The consumer (or its stream) vanished: create it again on the next round.
        if (code === JS_ERR.CONSUMER_NOT_FOUND || code === JS_ERR.STREAM_NOT_FOUND || /not found|deleted/i.test(msg)) consumer = undefined;
        log('consumer pull failed; retrying', { ...where, retryInMs: retryMs, ...errorInfo(err) });
        await pause(retryMs);
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      }
    }
  })();

  let stopped: Promise<void> | undefined;
  async function counts(): Promise<ConsumerCounts> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`consumer ${opts.stream}/${opts.durable} is not ready`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
    const info = await (await jsm()).consumers.info(opts.stream, opts.durable);
    return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
  }
  const self: ConsumerHandle = {
    stream: opts.stream,
    durable: opts.durable,
    stop() {
      running.delete(self);
      stopped ??= (async () => {
        stopping = true;
        wake();
        await activeBatch?.close().catch(() => undefined);
        await loop;
        // batch mode: queued messages still get their batches
        for (;;) {
          if (batchHandler) flush();
          if (inFlight.size === 0) break;
          await Promise.all([...inFlight]);
        }
      })();
      return stopped;
    },
    async lag() {
      const c = await counts();
      return c.pending + c.ackPending;
    },
    counts,
  };
  running.add(self);
  return self;
}

function isBatchHandlerResult(r: unknown): r is BatchHandlerResult {
  return isHandlerResult(r) || (typeof r === 'object' && r !== null && 'error' in r);
}

function isHandlerResult(r: unknown): r is HandlerResult {
  return r === 'ack' || r === 'term' || (typeof r === 'object' && r !== null && typeof (r as { nakDelayMs?: unknown }).nakDelayMs === 'number');
}
