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
  handler: (msg: ConsumedMessage) => Promise<HandlerResult>;
  log?: Log;
}

export interface ConsumerHandle {
  /** Stops pulling, waits for in-flight handlers to finish and settle their messages. */
  stop(): Promise<void>;
  /** Messages not yet processed: never delivered plus delivered-but-unacked (incl. waiting for retry). */
  lag(): Promise<number>;
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
  if (typeof opts.handler !== 'function') fail('handler is required');
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

  async function handle(m: JsMsg): Promise<void> {
    const headers = headersToRecord(m.headers);
    const deliveryCount = m.info.deliveryCount;
    let data: unknown;
    try {
      data = decodeJson(m.data);
    } catch (err) {
      // Undecodable input never becomes decodable: terminate instead of retrying.
      log('terminating message that is not JSON', { ...where, seq: m.seq, ...errorInfo(err) });
      m.term();
      return;
    }
    const msg: ConsumedMessage = {
      subject: m.subject,
      data,
      headers,
      seq: m.seq,
      deliveryCount,
      msgID: headers['Nats-Msg-Id'],
    };
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
      result = await context.with(extractTraceContext(headers), () => opts.handler(msg));
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
        while (inFlight.size >= concurrency && !stopping) await pause(60_000);
        if (stopping) break;
        const batch = await consumer.fetch({ max_messages: concurrency - inFlight.size, expires: FETCH_EXPIRES_MS });
        activeBatch = batch;
        if (stopping) await batch.close();
        // Messages already received when stop() closes the batch are still yielded and handled.
        for await (const m of batch) dispatch(m);
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
  return {
    stop() {
      stopped ??= (async () => {
        stopping = true;
        wake();
        await activeBatch?.close().catch(() => undefined);
        await loop;
        await Promise.all([...inFlight]);
      })();
      return stopped;
    },
    async lag() {
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
      return info.num_pending + info.num_ack_pending;
    },
  };
}

function isHandlerResult(r: unknown): r is HandlerResult {
  return r === 'ack' || r === 'term' || (typeof r === 'object' && r !== null && typeof (r as { nakDelayMs?: unknown }).nakDelayMs === 'number');
}
