// One-off data migrations a service runs at its start, before it takes requests (old shapes of its
// documents brought to the current one). Each is recorded done in the service's `migrations`
// collection once a start found nothing left to migrate, so the later starts skip its pass over the
// data (seconds at a million documents). "Found nothing", not "migrated": during a rolling update on
// MongoDB a replica of the older build may still write the old shape after one start migrated, and
// the next start migrates those.
import mongoose from 'mongoose';
import type { Store } from './types';

const migrationSchema = new mongoose.Schema({ _id: String, doneAt: { type: Date, required: true } }, { versionKey: false });

/**
 * Runs `pass` unless the migration `id` is recorded done, and records it done when the pass found
 * nothing to migrate. Answers the pass's result, or null when it was skipped.
 */
export async function migrateOnce<R extends { found: number }>(store: Store, id: string, pass: () => Promise<R>): Promise<R | null> {
  const migrations = store.collection<{ _id: string; doneAt: Date }>('migrations', migrationSchema);
  if (await migrations.findOne({ _id: id })) return null;
  const result = await pass();
  if (result.found === 0) await migrations.updateOne({ _id: id }, { $setOnInsert: { doneAt: new Date() } }, { upsert: true });
  return result;
}
