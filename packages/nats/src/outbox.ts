// Transactional outbox. A store write that must emit an event inserts an outbox document in the same
// store transaction; the relay later publishes pending documents and marks them sent. Whatever
// crashes where, nothing is lost: an unmarked document is published again, with msgID = its _id, and
// JetStream's duplicate window stores it once. A rolled-back transaction leaves no document, so
// nothing is published for it. Facts recorded together (recordTogether: a batch of deliveries, the
// jobs of an audience page) share one document and are published in order, each with its own msgID.
import { randomUUID } from 'node:crypto';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { mongoose, Store, type Transaction } from '@mailer/store';
import { JetStreamClient } from 'nats';
import { errorInfo, Log, silent } from './log';
import { publishBatch, traceHeaders, type BatchMessage } from './publish';

export interface OutboxDoc {
  _id: string;
  /** The fact's subject (of several facts: the first one's). */
  subject: string;
  /** The fact's payload (of several facts: null). */
  payload: unknown;
  /** Several facts recorded in one document, in order, each published with its id as msgID. */
  facts?: OutboxFact[];
  /** Trace context of the write, so the published message continues the request's trace. */
  headers?: Record<string, string>;
  createdAt: Date;
  /** Unset while pending. */
  publishedAt?: Date | null;
}

/** One fact of a document holding several. */
export interface OutboxFact {
  id: string;
  subject: string;
  payload: unknown;
}

export const OUTBOX_COLLECTION = 'outbox';

export const outboxSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    subject: { type: String, required: true },
    payload: { type: mongoose.Schema.Types.Mixed },
    facts: { type: mongoose.Schema.Types.Mixed },
    headers: { type: mongoose.Schema.Types.Mixed },
    createdAt: { type: Date, required: true },
    publishedAt: { type: Date },
  },
  // Mixed payloads may be empty objects; keep them rather than dropping the field.
  { versionKey: false, minimize: false },
);
// The relay's query (pending, oldest first) and the clean-up of old published documents.
outboxSchema.index({ publishedAt: 1, createdAt: 1 });

let lastCreatedAt = 0;
// Several records written in the same millisecond (one transaction emitting two facts) must still
// publish in the order they were recorded, so createdAt is kept strictly increasing per process.
function monotonicNow(): Date {
  const now = Date.now();
  lastCreatedAt = now > lastCreatedAt ? now : lastCreatedAt + 1;
  return new Date(lastCreatedAt);
}

/** A service's outbox as its use cases write to it: facts recorded in the caller's transaction. */
export function outboxRepository(store: Store) {
  const outbox = store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema);
  return {
    /**
     * Records facts in the caller's transaction. A fact with an `id` keeps it as its outbox id, which
     * is the published message's msgID (a fact derived from a unique record: one id, one message).
     */
    async record(tx: Transaction, facts: ReadonlyArray<{ subject: string; payload: unknown; id?: string }>): Promise<void> {
      if (facts.length) await outbox.insertMany(facts.map((f) => outboxRecord(f.subject, f.payload, f.id)), { tx });
    },
    /**
     * Records facts in the caller's transaction as ONE document (one write for a batch instead of
     * one per fact); each is still published as its own message, in order, with its `id` (or a new
     * one) as msgID.
     */
    async recordTogether(tx: Transaction, facts: ReadonlyArray<{ subject: string; payload: unknown; id?: string }>): Promise<void> {
      if (facts.length === 1) return this.record(tx, facts);
      if (facts.length === 0) return;
      const record = outboxRecord(facts[0].subject, null);
      record.facts = facts.map((f) => ({ id: f.id ?? randomUUID(), subject: f.subject, payload: f.payload ?? null }));
      await outbox.insertOne(record, { tx });
    },
    /** Cross-account: facts of every account recorded and not yet published (published records are deleted). */
    pendingAllAccounts(): Promise<number> {
      return outbox.countDocuments({});
    },
  };
}
export type OutboxRepository = ReturnType<typeof outboxRepository>;

/** Builds an outbox document; the caller inserts it in the transaction of the write it belongs to. */
export function outboxRecord(subject: string, payload: unknown, id: string = randomUUID()): OutboxDoc {
  const headers = traceHeaders();
  return {
    _id: id,
    subject,
    payload: payload ?? null,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    createdAt: monotonicNow(),
  };
}

export interface OutboxRelayOptions {
  store: Store;
  js: JetStreamClient;
  /** Poll interval when nobody calls notify(). Default 1 s. */
  intervalMs?: number;
  /** Documents read per query. Default 100. */
  batchSize?: number;
  /**
   * Published documents are deleted after this long. Default 24 h. 0 deletes them as soon as they are
   * published (one delete per batch): the outbox then only ever holds pending documents, which keeps a
   * service that emits an event per write (bulk imports) from holding every recent payload in memory
   * and from scanning them on each round. JetStream keeps the history either way.
   */
  retainPublishedMs?: number;
  collection?: string;
  log?: Log;
}

export interface OutboxRelay {
  /** Stops polling and waits for a publish round in progress. */
  stop(): Promise<void>;
  /** Publishes everything pending now; resolves with the number of messages published. */
  flush(): Promise<number>;
  /** Wakes the relay early, e.g. right after a write committed an outbox document. */
  notify(): void;
  /**
   * Waits until every outbox document committed before this call is published (JetStream PubAck),
   * at most `timeoutMs`. Resolves true when they are out, false on timeout or after stop() (the
   * documents stay pending and a later round publishes them). Exact without ids: a publish round
   * that starts after the call reads every pending document, batch after batch, until a batch comes
   * back short, so it includes everything committed before; a failed round is retried until the
   * deadline. Concurrent callers share rounds.
   */
  awaitPublished(timeoutMs: number): Promise<boolean>;
  /** Documents not published yet (the backlog; one count query). */
  pending(): Promise<number>;
}

const CLEANUP_EVERY_MS = 60_000;
/** Pause between publish rounds while awaitPublished() waits out a failure (NATS unreachable). */
const RETRY_AWAIT_MS = 100;

export function startOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const log = opts.log ?? silent;
  const intervalMs = opts.intervalMs ?? 1_000;
  const batchSize = opts.batchSize ?? 100;
  const retainPublishedMs = opts.retainPublishedMs ?? 24 * 60 * 60 * 1000;
  const outbox = opts.store.collection<OutboxDoc>(opts.collection ?? OUTBOX_COLLECTION, outboxSchema);

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastCleanup = 0;
  // One publish round at a time keeps createdAt order; callers arriving meanwhile share the next round.
  let current: Promise<number> | undefined;
  let queued: Promise<number> | undefined;

  // Without retention every document in the outbox is pending; `$exists: false` (equivalent here:
  // records never carry publishedAt until published) is also a condition the embedded store
  // tests without falling back to its generic evaluator, which matters with a large backlog.
  const pendingFilter = retainPublishedMs === 0 ? { publishedAt: { $exists: false } } : { publishedAt: null };

  async function publishPending(): Promise<number> {
    let published = 0;
    while (!stopped) {
      const pending = await outbox.find(pendingFilter, { sort: { createdAt: 1, _id: 1 }, limit: batchSize });
      if (retainPublishedMs === 0) {
        published += await publishAndDelete(pending);
      } else {
        for (const doc of pending) {
          // Publishing stops at the first failure so later documents never overtake an earlier one.
          const messages = messagesOf(doc);
          const failure = (await publishBatch(opts.js, messages)).find((a) => a instanceof Error);
          if (failure) throw failure;
          await outbox.updateOne({ _id: doc._id }, { $set: { publishedAt: new Date() } });
          published += messages.length;
        }
      }
      if (pending.length < batchSize) break;
    }
    if (retainPublishedMs > 0 && Date.now() - lastCleanup >= CLEANUP_EVERY_MS) {
      lastCleanup = Date.now();
      await outbox.deleteMany({ publishedAt: { $lt: new Date(Date.now() - retainPublishedMs) } });
    }
    return published;
  }

  /**
   * Publishes a batch pipelined (sent in order on the one connection, acknowledgements awaited
   * together), then deletes the published prefix in one write. On a failure the prefix before it is
   * deleted and the rest stays pending; a later document of the batch that JetStream did store is
   * published again next round and de-duplicated by its msgID. So a failure can let a document
   * overtake an earlier one (consumers of per-entity events order them by the version they carry);
   * without failures the stream holds the outbox order. A crash before the delete re-publishes the
   * batch on restart, again stored once per msgID.
   */
  async function publishAndDelete(pending: OutboxDoc[]): Promise<number> {
    const perDoc = pending.map(messagesOf);
    const acks = await publishBatch(opts.js, perDoc.flat());
    const failed = acks.findIndex((a) => a instanceof Error);
    // the documents whose every message was stored before the first failure
    let done = 0;
    for (let end = 0; done < pending.length; done++) {
      end += perDoc[done].length;
      if (failed !== -1 && end > failed) break;
    }
    if (done > 0) await outbox.deleteMany({ _id: { $in: pending.slice(0, done).map((d) => d._id) } });
    if (failed !== -1) throw acks[failed];
    return acks.length;
  }

  /** The messages of a document: its fact, or its facts in order. */
  function messagesOf(doc: OutboxDoc): BatchMessage[] {
    const headers = doc.headers ?? undefined;
    if (!doc.facts) return [{ subject: doc.subject, payload: doc.payload, msgID: doc._id, headers }];
    return doc.facts.map((f) => ({ subject: f.subject, payload: f.payload, msgID: f.id, headers }));
  }

  function round(): Promise<number> {
    if (current) {
      queued ??= current.catch(() => 0).then(() => {
        queued = undefined;
        return round();
      });
      return queued;
    }
    // The relay acts for no request: publish outside whatever context triggered it (notify() from a
    // handler), so each message carries the trace context stored with its own record.
    current = context.with(ROOT_CONTEXT, publishPending).finally(() => {
      current = undefined;
    });
    return current;
  }

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, ms);
    timer.unref();
  }

  function tick(): void {
    // a published round is the normal case: no log line (services log the relay's messages as warnings)
    round()
      .catch((err) => log('outbox relay round failed; will retry', errorInfo(err)))
      .finally(() => schedule(intervalMs));
  }

  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([current, queued]);
    },
    flush: round,
    pending: () => outbox.countDocuments(pendingFilter),
    notify() {
      schedule(0);
    },
    async awaitPublished(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!stopped) {
        const left = deadline - Date.now();
        if (left <= 0) return false;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), left);
        });
        const outcome = await Promise.race([round().then(() => 'ok' as const, () => 'failed' as const), timeout]);
        clearTimeout(timer);
        if (outcome === 'timeout') return false;
        // A round cut short by stop() did not necessarily publish everything.
        if (outcome === 'ok') return !stopped;
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_AWAIT_MS, Math.max(0, deadline - Date.now()))));
      }
      return false;
    },
  };
}
