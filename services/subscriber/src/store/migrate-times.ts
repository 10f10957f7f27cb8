// Issue 10: the subscriber service stored its times as ISO 8601 strings, every other service as
// BSON Dates. Its schemas now say Date; data directories (or databases) written by the older build
// still hold the strings, which Date filters, report ranges and sorts would not compare as times.
// setup() runs this before the gRPC server listens, so no request sees a half-converted store.
import type { Logger } from '@mailer/kit';
import { convertStringTimes, mongoose, type Store } from '@mailer/store';
import { fieldSchema, tagSchema, topicSchema } from './catalog';
import { subscriberSchema } from './subscribers';

/** The service's collections with times (by the names the repositories open them with). The outbox always stored Dates. */
const TIMED_COLLECTIONS = { subscribers: subscriberSchema, fields: fieldSchema, tags: tagSchema, topics: topicSchema };

/** Writes of this many documents each: a million subscribers is a thousand writes, not one. */
export const MIGRATION_BATCH_SIZE = 1000;

/**
 * Which conversions are done for good, so that later starts skip them (the pass that finds the
 * strings reads every document: seconds at a million subscribers). A conversion counts as done once
 * a start found nothing left to convert, not when it converted: during a rolling update on MongoDB
 * a replica of the older build may still write strings after one start converted, and the next
 * start converts those.
 */
const migrationSchema = new mongoose.Schema({ _id: String, doneAt: { type: Date, required: true } }, { versionKey: false });

/**
 * Converts every string time of the service's collections (each Date path of their schemas) to a
 * Date, logging one line per collection. Idempotent: on converted data it finds and writes nothing,
 * and records that, so the starts after skip the pass.
 * Returns the number of documents converted per collection.
 */
export async function migrateTimes(store: Store, logger: Logger): Promise<Record<string, number>> {
  const converted: Record<string, number> = {};
  const migrations = store.collection<{ _id: string; doneAt: Date }>('migrations', migrationSchema);
  for (const [name, schema] of Object.entries(TIMED_COLLECTIONS)) {
    const id = `string-times:${name}`;
    if (await migrations.findOne({ _id: id })) {
      converted[name] = 0;
      logger.info({ collection: name }, 'string times: already converted');
      continue;
    }
    const started = Date.now();
    const result = await convertStringTimes(store.collection(name, schema), schema, { batchSize: MIGRATION_BATCH_SIZE });
    converted[name] = result.converted;
    logger.info({ collection: name, found: result.found, converted: result.converted, ms: Date.now() - started }, 'string times converted to dates');
    if (result.found === 0) await migrations.updateOne({ _id: id }, { $setOnInsert: { doneAt: new Date() } }, { upsert: true });
  }
  return converted;
}
