/**
 * @mailer/store: the storage layer every service uses. Data access is written once in the
 * MongoDB query/update language against `Collection`; `openStore` picks the adapter:
 * MongoDB (mongoose) when `mongodbUri` is set, else the embedded engine (SQLite) in `dataDir`.
 * Mongoose schemas are the one definition of shape, validation and indexes for both.
 */
import mongoose from 'mongoose';
import { SqliteStore } from './sqlite/store';
import { MongoStore } from './mongo/store';
import type { Store, StoreConfig } from './types';

export * from './types';
export { DuplicateKeyError, DocumentValidationError } from './errors';
export type { ValidationProblem } from './errors';
export { SUPPORTED_STAGES } from './pipeline';
export { convertStringTimes, datePaths, isoTime, type StringTimesResult } from './string-times';
export { migrateOnce } from './migrations';
/** The mongoose instance schemas must be defined with (same package copy as the adapters). */
export { mongoose };

export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.mongodbUri) return MongoStore.open(config.mongodbUri);
  if (!config.dataDir) throw new Error('@mailer/store: dataDir is required when mongodbUri is unset');
  return SqliteStore.open(config);
}
