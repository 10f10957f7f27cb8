// The form service's forms, as far as they exist yet: the fields each collects (the usage report's
// input). Every query is scoped to one account.
import { mongoose, type Store } from '@mailer/store';
import type { FormFields, FormStatus } from '../domain/field-usage';

export interface FormDoc {
  _id: string;
  accountId: string;
  name: string;
  status: FormStatus;
  /** Custom field ids of the form's input fields, lowercase. */
  fieldIds: string[];
  createdAt: Date;
}

export const FORMS = 'forms';

export const formSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    status: { type: String, required: true, enum: ['ACTIVE', 'INACTIVE'] },
    fieldIds: { type: [String], default: [] },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
formSchema.index({ accountId: 1, fieldIds: 1 });

export interface FormRepository {
  /** The account's forms that collect the field, by name. */
  usingField(accountId: string, fieldId: string): Promise<FormFields[]>;
  /** Drops the field from the account's forms; returns how many changed. */
  removeField(accountId: string, fieldId: string): Promise<number>;
}

export function formRepository(store: Store): FormRepository {
  const forms = store.collection<FormDoc>(FORMS, formSchema);
  return {
    async usingField(accountId, fieldId) {
      const docs = await forms.find({ accountId, fieldIds: fieldId.toLowerCase() }, { sort: { name: 1, _id: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name, status: d.status, fieldIds: d.fieldIds }));
    },
    async removeField(accountId, fieldId) {
      const id = fieldId.toLowerCase();
      return (await forms.updateMany({ accountId, fieldIds: id }, { $pull: { fieldIds: id } })).modifiedCount;
    },
  };
}
