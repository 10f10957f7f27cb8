// Automation runs (collection 'automation_runs', the API contract AutomationRun): one per automation and event
// (a unique index: a redelivered event can never start a second one), with the outcome of every step
// it finished. The run record is the truth the executor resumes from: `stepIndex` is the first
// unfinished step, and a step's outcome is written with a compare-and-set on it, so a redelivered job
// or a second executor never records (nor repeats) a finished step. Every query of the API is
// scoped to one account; the wait scheduler's query is the one cross-account read (due runs).
//
// A finished run is kept RUN_RETENTION_DAYS after it finished (`finishedAt`: MongoDB's TTL index, the
// embedded store's pruner); an unfinished one has no `finishedAt` and is never removed. What keeps a
// subscriber out of a ONCE automation is its entry (once-entries.ts), which outlives the run.
import { type AccountFilter, acrossAccounts, type Collection, mongoose, type Store, type Transaction } from '@mailer/store';

export const RUN_STATUSES = ['RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_STATUSES: readonly RunStatus[] = ['COMPLETED', 'EXITED', 'FAILED', 'CANCELLED'];
export type StepOutcome = 'DONE' | 'SKIPPED' | 'FAILED';

export interface RunStepDoc {
  index: number;
  type: string;
  outcome: StepOutcome;
  at: Date;
  detail: string | null;
}

export interface RunDoc {
  _id: string; // runId
  accountId: string;
  automationId: string;
  eventId: string;
  subscriberId: string;
  email: string;
  status: RunStatus;
  /** The first step not finished yet (= steps.length of the automation once it ended). */
  stepIndex: number;
  startedAt: Date;
  updatedAt: Date;
  /** WAITING: when the WAIT at stepIndex ends. */
  dueAt: Date | null;
  /** The wait scheduler's claim on a due run (another replica leaves it alone until then). */
  leaseUntil: Date | null;
  steps: RunStepDoc[];
  /** When the run reached a final status; null while it is unfinished. Retention counts from it. */
  finishedAt: Date | null;
  /**
   * Entry ONCE, as builds before once-entries.ts recorded it (`<automationId>:<subscriberId>`): no
   * longer written; the start-up migration (migrate-runs.ts) moves it into an entry.
   */
  onceKey?: string;
  /** Entry ONE_AT_A_TIME: the same key while the run is unfinished, removed when it ends. */
  activeKey?: string;
}

export const RUNS = 'automation_runs';

const { Schema } = mongoose;
export const runSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    automationId: { type: String, required: true },
    eventId: { type: String, required: true },
    subscriberId: { type: String, required: true },
    email: { type: String, required: true },
    status: { type: String, required: true },
    stepIndex: { type: Number, required: true },
    startedAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    dueAt: { type: Date, default: null },
    leaseUntil: { type: Date, default: null },
    steps: { type: [Schema.Types.Mixed], default: [] },
    finishedAt: { type: Date, default: null },
    onceKey: { type: String },
    activeKey: { type: String },
  },
  { versionKey: false, minimize: false },
);
// At most one run per automation and event (the API contract).
runSchema.index({ automationId: 1, eventId: 1 }, { unique: true });
// The entry rule ONE_AT_A_TIME, enforced by the store whatever two concurrent events do (ONCE: once-entries.ts).
runSchema.index({ activeKey: 1 }, { unique: true, sparse: true });
// GET /automations/{id}/runs (newest first, optionally by status).
runSchema.index({ accountId: 1, automationId: 1, startedAt: -1, _id: -1 });
// The wait scheduler: waiting runs by due time.
runSchema.index({ status: 1, dueAt: 1 });

/** The runs; a finished one is kept `retentionDays` (RUN_RETENTION_DAYS) after it finished. */
export const runCollection = (store: Store, retentionDays = 90): Collection<RunDoc> =>
  store.collection<RunDoc>(RUNS, runSchema, { expireAfter: { path: 'finishedAt', days: retentionDays } });

export const entryKey = (automationId: string, subscriberId: string) => `${automationId}:${subscriberId}`;
const UNFINISHED: RunStatus[] = ['RUNNING', 'WAITING'];

export function runsOf(runs: Collection<RunDoc>, accountId: string) {
  return {
    get: (runId: string): Promise<RunDoc | null> => runs.findOne({ _id: runId, accountId }),
    async insert(docs: RunDoc[], tx: Transaction): Promise<void> {
      if (docs.some((d) => d.accountId !== accountId)) throw new Error('runsOf.insert: a run belongs to another account');
      if (docs.length) await runs.insertMany(docs, { tx });
    },
    /** Whether a run of the ONE_AT_A_TIME automation is unfinished for the subscriber. */
    hasUnfinished: async (automationId: string, subscriberId: string): Promise<boolean> =>
      (await runs.countDocuments({ accountId, activeKey: entryKey(automationId, subscriberId) })) > 0,
    async list(automationId: string, q: { status?: RunStatus; pageNumber: number; pageSize: number }): Promise<{ items: RunDoc[]; totalItems: number }> {
      const filter: AccountFilter = { accountId, automationId };
      if (q.status) filter.status = q.status;
      const [items, totalItems] = await Promise.all([
        runs.find(filter, { sort: { startedAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        runs.countDocuments(filter),
      ]);
      return { items, totalItems };
    },
    /**
     * Records the outcome of step `index` and moves on, only if the run is still at that step and
     * unfinished (compare-and-set): false when someone else recorded it first or the run ended.
     */
    async finishStep(runId: string, step: RunStepDoc, next: { status: RunStatus; stepIndex: number; dueAt?: Date | null }, now: Date, tx?: Transaction): Promise<boolean> {
      const final = FINAL_STATUSES.includes(next.status);
      const r = await runs.updateOne(
        { _id: runId, accountId, stepIndex: step.index, status: { $in: UNFINISHED } },
        {
          $push: { steps: step },
          $set: { status: next.status, stepIndex: next.stepIndex, dueAt: next.dueAt ?? null, leaseUntil: null, updatedAt: now, finishedAt: final ? now : null },
          ...(final ? { $unset: { activeKey: '' } } : {}),
        },
        { tx },
      );
      return r.matchedCount > 0;
    },
    /** The run reaches a WAIT at `stepIndex`: it waits until `dueAt`. */
    async startWaiting(runId: string, stepIndex: number, dueAt: Date, now: Date): Promise<boolean> {
      const r = await runs.updateOne({ _id: runId, accountId, stepIndex, status: 'RUNNING' }, { $set: { status: 'WAITING', dueAt, leaseUntil: null, updatedAt: now } });
      return r.matchedCount > 0;
    },
    /** Ends an unfinished run without a step (its automation is gone, the run is complete). */
    async end(runId: string, status: RunStatus, now: Date): Promise<boolean> {
      const r = await runs.updateOne(
        { _id: runId, accountId, status: { $in: UNFINISHED } },
        { $set: { status, dueAt: null, leaseUntil: null, updatedAt: now, finishedAt: now }, $unset: { activeKey: '' } },
      );
      return r.matchedCount > 0;
    },
    /** Deleting an automation: its unfinished runs are CANCELLED (a waiting one never resumes). */
    async cancelUnfinished(automationId: string, now: Date): Promise<number> {
      const r = await runs.updateMany(
        { accountId, automationId, status: { $in: UNFINISHED } },
        { $set: { status: 'CANCELLED', dueAt: null, leaseUntil: null, updatedAt: now, finishedAt: now }, $unset: { activeKey: '' } },
      );
      return r.modifiedCount;
    },
  };
}
export type RunRepository = ReturnType<typeof runsOf>;

/** The wait scheduler's view: due waiting runs of every account, claimed with a lease. */
export function dueRuns(collection: Collection<RunDoc>) {
  const runs = acrossAccounts(collection);
  return {
    /** Claims up to `limit` waiting runs due by `now` whose lease is free; answers them. */
    async claim(now: Date, leaseMs: number, limit: number): Promise<RunDoc[]> {
      const candidates = await runs.find(
        { status: 'WAITING', dueAt: { $lte: now } },
        { sort: { dueAt: 1 }, limit, projection: { _id: 1, accountId: 1, leaseUntil: 1 } },
      );
      const claimed: RunDoc[] = [];
      for (const c of candidates) {
        if (c.leaseUntil && c.leaseUntil > now) continue;
        const got = await runs.findOneAndUpdate(
          { _id: c._id, status: 'WAITING', $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
          { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
          { returnDocument: 'after' },
        );
        if (got) claimed.push(got);
      }
      return claimed;
    },
    /** When the next waiting run is due (leased ones included: a lease may lapse), or null. */
    async nextDueAt(): Promise<Date | null> {
      const [next] = await runs.find({ status: 'WAITING' }, { sort: { dueAt: 1 }, limit: 1, projection: { dueAt: 1 } });
      return next?.dueAt ?? null;
    },
  };
}
