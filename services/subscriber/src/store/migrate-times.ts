// Issue 10: the subscriber service stored its times as ISO 8601 strings, every other service as
// BSON Dates. Its schemas now say Date; data directories (or databases) written by the older build
// still hold the strings, which Date filters, report ranges and sorts would not compare as times.
// setup() runs this before the gRPC server listens, so no request sees a half-converted store.
import type { Logger } from '@mailer/kit';
import { convertStringTimes, migrateOnce, type Store } from '@mailer/store';
import { fieldSchema, tagSchema, topicSchema } from './catalog';
import { subscriberSchema } from './subscribers';

/** The service's collections with times (by the names the repositories open them with). The outbox always stored Dates. */
const TIMED_COLLECTIONS = { subscribers: subscriberSchema, fields: fieldSchema, tags: tagSchema, topics: topicSchema };

/** Writes of this many documents each: a million subscribers is a thousand writes, not one. */
export const MIGRATION_BATCH_SIZE = 1000;

/**
 * Converts every string time of the service's collections (each Date path of their schemas) to a
 * Date, logging one line per collection. Idempotent: on converted data it finds and writes nothing,
 * and records that, so the starts after skip the pass.
 * Returns the number of documents converted per collection.
 */
export async function migrateTimes(store: Store, logger: Logger): Promise<Record<string, number>> {
  const converted: Record<string, number> = {};
  for (const [name, schema] of Object.entries(TIMED_COLLECTIONS)) {
    const started = Date.now();
    // recorded done once a start finds no string left (later starts skip the pass over every document)
    const result = await migrateOnce(store, `string-times:${name}`, () => convertStringTimes(store.collection(name, schema), schema, { batchSize: MIGRATION_BATCH_SIZE }));
    converted[name] = result?.converted ?? 0;
    if (result) logger.info({ collection: name, found: result.found, converted: result.converted, ms: Date.now() - started }, 'string times converted to dates');
    else logger.info({ collection: name }, 'string times: already converted');
  }
  return converted;
}
