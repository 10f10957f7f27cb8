/**
 * Processed-message ids for idempotent consumers (docs/architecture.md: "an idempotent handler (processed ids
 * recorded in the store)"). JetStream delivers at least once: a message is redelivered when its ack
 * is lost, and the outbox may publish a fact again after the duplicate window. A consumer whose work
 * is not idempotent by itself records the message's id in the same store transaction as its work,
 * so the work is committed exactly once per id, whatever the deliveries.
 *
 * Records live in one collection per service (`processed_messages`), unique on (consumer,
 * messageId), and are kept `retentionMs` (default 7 days: far longer than any redelivery or
 * re-publication), then deleted by `prune()`, which the service runs periodically (`pruneEvery`).
 */
import { DuplicateKeyError, mongoose, type Store, type Transaction } from '@mailer/store';
import type { ConsumedMessage } from './consumer';

export const PROCESSED_MESSAGES_COLLECTION = 'processed_messages';

export interface ProcessedMessageDoc {
  _id: string;
  consumer: string;
  messageId: string;
  processedAt: Date;
}

export const processedMessageSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    consumer: { type: String, required: true },
    messageId: { type: String, required: true },
    processedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
processedMessageSchema.index({ consumer: 1, messageId: 1 }, { unique: true });
processedMessageSchema.index({ processedAt: 1 }); // prune()

export const DEFAULT_PROCESSED_RETENTION_MS = 7 * 24 * 3600_000;

export interface ProcessedMessagesOptions {
  /** How long an id is remembered. Default 7 days. */
  retentionMs?: number;
  /** The clock (tests pass a fixed one). */
  now?: () => Date;
}

export type OnceResult<R> = { firstTime: true; result: R } | { firstTime: false };

export interface ProcessedMessages {
  readonly consumer: string;
  /**
   * Runs `work` unless this id was processed already: the id is recorded in the same transaction as
   * `work`'s writes (which must pass `{ tx }`), so a failing `work` records nothing and the redelivery
   * runs it again, and two concurrent deliveries commit it once (the second finds the id recorded).
   */
  once<R>(messageId: string, work: (tx: Transaction) => Promise<R>): Promise<OnceResult<R>>;
  /** Whether the id is recorded (for work outside the store: check, do, then record). */
  seen(messageId: string): Promise<boolean>;
  /** Records the id; false when it was recorded already (in a `tx`, MongoDB then aborts it: prefer once). */
  record(messageId: string, options?: { tx?: Transaction }): Promise<boolean>;
  /** Deletes this consumer's records older than the retention; returns how many. */
  prune(): Promise<number>;
  /** Runs prune() every `intervalMs` (errors are retried next round); returns the stop function. */
  pruneEvery(intervalMs: number): () => Promise<void>;
}

/**
 * The id of a consumed message for `once`: the publisher's de-duplication id (the outbox document id,
 * the same on every re-publication), else the stream sequence.
 */
export const messageIdOf = (msg: Pick<ConsumedMessage, 'msgID' | 'seq'>): string => msg.msgID ?? `seq:${msg.seq}`;

export function processedMessages(store: Store, consumer: string, options: ProcessedMessagesOptions = {}): ProcessedMessages {
  if (!consumer) throw new Error('processedMessages: a consumer name is required');
  const retentionMs = options.retentionMs ?? DEFAULT_PROCESSED_RETENTION_MS;
  const now = options.now ?? (() => new Date());
  const records = store.collection<ProcessedMessageDoc>(PROCESSED_MESSAGES_COLLECTION, processedMessageSchema);
  // `consumer` and `messageId` are kept as fields for the unique index; the _id joins them unambiguously.
  const idOf = (messageId: string) => `${consumer.length}:${consumer}:${messageId}`;
  const insert = (messageId: string, tx?: Transaction) =>
    records.insertOne({ _id: idOf(messageId), consumer, messageId, processedAt: now() }, tx ? { tx } : undefined);
  const prune = () => records.deleteMany({ consumer, processedAt: { $lt: new Date(now().getTime() - retentionMs) } });

  return {
    consumer,
    async once(messageId, work) {
      try {
        return await store.transaction(async (tx) => {
          await insert(messageId, tx); // first: a duplicate stops before doing any work
          return { firstTime: true as const, result: await work(tx) };
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.collection === PROCESSED_MESSAGES_COLLECTION) return { firstTime: false };
        throw err;
      }
    },
    async seen(messageId) {
      return (await records.countDocuments({ consumer, messageId })) > 0;
    },
    async record(messageId, opts) {
      try {
        await insert(messageId, opts?.tx);
        return true;
      } catch (err) {
        if (err instanceof DuplicateKeyError) return false;
        throw err;
      }
    },
    prune,
    pruneEvery(intervalMs) {
      let running: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        running = prune().catch(() => undefined);
      }, intervalMs);
      timer.unref();
      return async () => {
        clearInterval(timer);
        await running;
      };
    },
  };
}
