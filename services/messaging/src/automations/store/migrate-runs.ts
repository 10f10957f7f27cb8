// Runs written before finished runs were pruned hold what the current build keeps elsewhere: a run of
// a ONCE automation carries its entry as `onceKey` (the entry rule read it from the runs), and a
// finished run has no `finishedAt`, so retention would never remove it. setup() runs this before
// events and runs are consumed: each such run's entry becomes a ONCE entry and its `onceKey` goes,
// and a finished run gets `finishedAt` = its last update (when it ended), or is deleted at once when
// that is past the retention (the pruner would delete it a minute later; a delete costs a tenth of the
// update), in one transaction per batch, so no subscriber may enter a ONCE automation a second time
// after the upgrade. A start cut short keeps the batches it committed: the next one goes on.
import { acrossAccounts, migrateOnce, type BulkOp, type Collection, type Store } from '@mailer/store';
import type { OnceEntryDoc } from './once-entries';
import { FINAL_STATUSES, RUNS, type RunDoc } from './runs';

const RUN_MIGRATION_BATCH = 500;

/** Answers how many runs it found to migrate (null: done at an earlier start, skipped). */
export function migrateRuns(
  store: Store,
  runs: Collection<RunDoc>,
  entries: Collection<OnceEntryDoc>,
  retention: { days: number; now: Date },
): Promise<{ found: number } | null> {
  const expired = retention.now.getTime() - retention.days * 86_400_000;
  return migrateOnce(store, `once-entries:${RUNS}`, async () => {
    const legacy = { $or: [{ onceKey: { $exists: true } }, { status: { $in: FINAL_STATUSES }, finishedAt: null }] };
    // the ids first (one read, not held open while the batches write), then each batch by its ids
    const ids = (await runs.aggregate<{ _id: string }>([{ $match: legacy }, { $project: { _id: 1 } }])).map((r) => r._id);
    for (let i = 0; i < ids.length; i += RUN_MIGRATION_BATCH) {
      const batch = await acrossAccounts(runs).find({ _id: { $in: ids.slice(i, i + RUN_MIGRATION_BATCH) } });
      const entryOps: BulkOp[] = batch
        .filter((r) => r.onceKey !== undefined)
        .map((r) => ({
          updateOne: {
            // an upsert: during a rolling update a replica of this build may have entered the subscriber already
            filter: { accountId: r.accountId, automationId: r.automationId, subscriberId: r.subscriberId },
            update: { $setOnInsert: { _id: r._id, enteredAt: r.startedAt } },
            upsert: true,
          },
        }));
      const runOps: BulkOp[] = batch.map((r) => {
        const finished = FINAL_STATUSES.includes(r.status) && !r.finishedAt;
        if (finished && r.updatedAt.getTime() < expired) return { deleteOne: { filter: { _id: r._id } } };
        return {
          updateOne: {
            filter: { _id: r._id },
            update: { ...(finished ? { $set: { finishedAt: r.updatedAt } } : {}), ...(r.onceKey !== undefined ? { $unset: { onceKey: '' } } : {}) },
          },
        };
      });
      await store.transaction(async (tx) => {
        if (entryOps.length) await acrossAccounts(entries).bulkWrite(entryOps, { tx });
        await acrossAccounts(runs).bulkWrite(runOps, { tx });
      });
    }
    return { found: ids.length };
  });
}
