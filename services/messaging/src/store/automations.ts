// The messaging service's automations, as far as they exist yet: their steps (the usage report's
// input). Every query is scoped to one account.
import { mongoose, type Store } from '@mailer/store';
import type { AutomationSteps } from '../domain/automation-field-usage';

export interface AutomationDoc {
  _id: string;
  accountId: string;
  name: string;
  active: boolean;
  /** Steps as the API defines them (`type` and that type's members; field ids lowercase). */
  steps: Array<{ type: string; fieldId?: string; [member: string]: unknown }>;
  createdAt: Date;
}

export const AUTOMATIONS = 'automations';

export const automationSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    active: { type: Boolean, required: true },
    steps: { type: [mongoose.Schema.Types.Mixed], default: [] },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
automationSchema.index({ accountId: 1, 'steps.fieldId': 1 });
automationSchema.index({ accountId: 1, 'steps.templateName': 1 });

export interface AutomationRepository {
  /** The account's automations with a step naming the field, by name. */
  namingField(accountId: string, fieldId: string): Promise<AutomationSteps[]>;
  /** The account's automations with a step sending the email template, by name. */
  namingTemplate(accountId: string, templateName: string): Promise<Array<{ id: string; name: string }>>;
}

export function automationRepository(store: Store): AutomationRepository {
  const automations = store.collection<AutomationDoc>(AUTOMATIONS, automationSchema);
  return {
    async namingField(accountId, fieldId) {
      const docs = await automations.find({ accountId, 'steps.fieldId': fieldId.toLowerCase() }, { sort: { name: 1, _id: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name, active: d.active, steps: d.steps }));
    },
    async namingTemplate(accountId, templateName) {
      const docs = await automations.find({ accountId, 'steps.templateName': templateName }, { sort: { name: 1, _id: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name }));
    },
  };
}
