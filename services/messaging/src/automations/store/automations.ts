// The messaging service's automations (the API contract "Events and automations"): trigger, entry rule, steps,
// activation and run counters. Steps are stored as the API defines them (`type` and that type's
// members; ids lowercase), which the field-usage and template-usage queries read. Every query is
// scoped to one account.
import { mongoose, type Store, type Transaction } from '@mailer/store';
import type { EntryRule } from '../domain/automation';
import type { AutomationSteps } from '../domain/automation-field-usage';

/** A step as stored: `type` and that type's members (see domain/automation.ts for each type). */
export type StoredStep = { type: string; fieldId?: string; templateName?: string; [member: string]: unknown };

export interface AutomationDoc {
  _id: string;
  accountId: string;
  name: string;
  /** API_REQUEST on `eventKey`: the only trigger type. Absent only on records written before triggers existed. */
  trigger?: { type: 'API_REQUEST'; eventKey: string };
  entry?: EntryRule;
  active: boolean;
  steps: StoredStep[];
  /** Run counters (the run engine increments them). */
  stats?: { runsStarted: number; runsCompleted: number };
  createdAt: Date;
  updatedAt?: Date;
}

export const AUTOMATIONS = 'automations';

export const automationSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    trigger: { type: mongoose.Schema.Types.Mixed },
    entry: { type: String },
    active: { type: Boolean, required: true },
    steps: { type: [mongoose.Schema.Types.Mixed], default: [] },
    stats: { type: mongoose.Schema.Types.Mixed },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date },
  },
  { versionKey: false, minimize: false },
);
automationSchema.index({ accountId: 1, 'steps.fieldId': 1 });
automationSchema.index({ accountId: 1, 'steps.templateName': 1 });
// Who uses a segment (IF_IN_SEGMENT) or topic (SEND_EMAIL): asked before one is deleted.
automationSchema.index({ accountId: 1, 'steps.segmentId': 1 });
automationSchema.index({ accountId: 1, 'steps.topicId': 1 });
// The events consumer's match: the account's active automations triggered by an event key.
automationSchema.index({ accountId: 1, 'trigger.eventKey': 1, active: 1 });
automationSchema.index({ accountId: 1, createdAt: 1 });

export interface AutomationRepository {
  /** The account's automations with a step naming the field, by name. */
  namingField(accountId: string, fieldId: string): Promise<AutomationSteps[]>;
  /** The account's automations with a step sending the email template, by name. */
  namingTemplate(accountId: string, templateName: string): Promise<Array<{ id: string; name: string }>>;
  /** How many of the account's automations have a step naming the segment or topic, and up to `limit` of them by name. */
  namingAudience(accountId: string, member: 'segmentId' | 'topicId', id: string, limit: number): Promise<{ count: number; automations: Array<{ id: string; name: string }> }>;
  /** The account's active automations triggered by the event key (API_REQUEST), oldest first, with their entry rule. */
  activeTriggeredBy(accountId: string, eventKey: string): Promise<Array<{ id: string; entry: EntryRule }>>;
  /** Counts runs in `stats` (runsStarted in the transaction that starts them). */
  countRuns(accountId: string, id: string, inc: { runsStarted?: number; runsCompleted?: number }, tx?: Transaction): Promise<void>;
  /** Every automation of the account, oldest first. */
  list(accountId: string): Promise<AutomationDoc[]>;
  get(accountId: string, id: string): Promise<AutomationDoc | null>;
  insert(doc: AutomationDoc): Promise<void>;
  /** Replaces what a PUT may change; null when the automation does not exist (any more). */
  replace(accountId: string, id: string, set: Pick<AutomationDoc, 'name' | 'trigger' | 'entry' | 'active' | 'steps' | 'updatedAt'>): Promise<AutomationDoc | null>;
  /** False when it did not exist. */
  delete(accountId: string, id: string): Promise<boolean>;
}

export const automationCollection = (store: Store) => store.collection<AutomationDoc>(AUTOMATIONS, automationSchema);

export function automationRepository(store: Store): AutomationRepository {
  const automations = automationCollection(store);
  return {
    async namingField(accountId, fieldId) {
      const docs = await automations.find({ accountId, 'steps.fieldId': fieldId.toLowerCase() }, { sort: { name: 1, _id: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name, active: d.active, steps: d.steps }));
    },
    async namingTemplate(accountId, templateName) {
      const docs = await automations.find({ accountId, 'steps.templateName': templateName }, { sort: { name: 1, _id: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name }));
    },
    async namingAudience(accountId, member, id, limit) {
      const filter = { accountId, [`steps.${member}`]: id };
      const [count, some] = await Promise.all([automations.countDocuments(filter), automations.find(filter, { sort: { name: 1, _id: 1 }, limit, projection: { name: 1 } })]);
      return { count, automations: some.map((d) => ({ id: d._id, name: d.name })) };
    },
    async activeTriggeredBy(accountId, eventKey) {
      const docs = await automations.find(
        { accountId, 'trigger.eventKey': eventKey, active: true },
        { sort: { createdAt: 1, _id: 1 }, projection: { _id: 1, entry: 1 } },
      );
      return docs.map((d) => ({ id: d._id, entry: d.entry ?? 'EVERY_EVENT' }));
    },
    async countRuns(accountId, id, inc, tx) {
      const $inc: Record<string, number> = {};
      if (inc.runsStarted) $inc['stats.runsStarted'] = inc.runsStarted;
      if (inc.runsCompleted) $inc['stats.runsCompleted'] = inc.runsCompleted;
      if (Object.keys($inc).length) await automations.updateOne({ _id: id, accountId }, { $inc }, { tx });
    },
    list: (accountId) => automations.find({ accountId }, { sort: { createdAt: 1, _id: 1 } }),
    get: (accountId, id) => automations.findOne({ _id: id, accountId }),
    insert: (doc) => automations.insertOne(doc),
    replace: (accountId, id, set) => automations.findOneAndUpdate({ _id: id, accountId }, { $set: set }, { returnDocument: 'after' }),
    async delete(accountId, id) {
      return (await automations.deleteOne({ _id: id, accountId })) > 0;
    },
  };
}
