// The form service's forms (collection 'forms'): the full record of domain/form.ts plus `fieldIds`,
// the custom fields among the inputs, for the field usage queries. Every query is scoped to one
// account except the two named "AcrossAccounts" (public pages and submissions arrive without one).
//
// routePath uniqueness: a landing page's (domain, routePath) is unique across the installation
// (the API contract "409 route_path_taken"). A unique index enforces it, so two concurrent saves can never both
// win; it holds only forms with a routePath (partial index), and `domain` null (the default host)
// collides with null as MongoDB's unique indexes do.
import { acrossAccounts, DuplicateKeyError, mongoose, type Store, type Transaction } from '@mailer/store';
import type { FormFields } from '../domain/field-usage';
import { customFieldIdsOf, type Form, type FormField } from '../domain/form';

const { Schema } = mongoose;

export interface FormDoc extends Omit<Form, 'id'> {
  _id: string;
  /** Custom field ids of the form's input fields, lowercase (derived from inputFields on every write). */
  fieldIds: string[];
}

export const FORMS = 'forms';

const fieldRefSchema = new Schema(
  {
    type: { type: String, required: true, enum: ['BUILT_IN', 'CUSTOM'] },
    builtInField: { type: String },
    fieldId: { type: String },
  },
  { _id: false },
);

const formFieldSchema = new Schema(
  {
    fieldRef: { type: fieldRefSchema, required: true },
    fieldId: { type: String, required: true },
    personalizationTagName: { type: String, required: true },
    label: { type: String, default: '' },
    placeholder: { type: String, default: '' },
    isRequired: { type: Boolean, required: true },
    position: { type: Number, required: true },
    fieldType: { type: String, required: true },
    inputControl: { type: String, required: true },
    optionValues: { type: [String], default: [] },
  },
  { _id: false },
);

export const formSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    type: { type: String, required: true, enum: ['DEFAULT', 'SLIDER', 'INLINE', 'POPUP', 'PAGE'] },
    status: { type: String, required: true, enum: ['ACTIVE', 'INACTIVE'] },
    landingPageStatus: { type: String, required: true, enum: ['DRAFT', 'PUBLISHED', 'UNPUBLISHED'] },
    lastPublishedAt: { type: Date, default: null },
    inputFields: { type: [formFieldSchema], default: [] },
    fieldIds: { type: [String], default: [] },
    topicIds: { type: [String], default: [] },
    doubleOptIn: { type: Boolean, required: true },
    senderProfileId: { type: String, default: null },
    confirmationTemplateName: { type: String, default: null },
    routePath: { type: String, default: null },
    domain: { type: String, default: null },
    allowedOrigins: { type: [String], default: [] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
formSchema.index({ accountId: 1, fieldIds: 1 });
formSchema.index({ accountId: 1, createdAt: 1 });
formSchema.index({ accountId: 1, senderProfileId: 1 });
formSchema.index({ accountId: 1, confirmationTemplateName: 1 });
export const ROUTE_INDEX = 'domain_1_routePath_1';
formSchema.index({ domain: 1, routePath: 1 }, { unique: true, partialFilterExpression: { routePath: { $gt: '' } }, name: ROUTE_INDEX });

/** Thrown by create/update when another form (of any account) holds the landing page's domain and routePath. */
export class RoutePathTakenError extends Error {
  constructor(readonly domain: string | null, readonly routePath: string) {
    super(`routePath ${routePath} is taken on ${domain ?? 'the default host'}`);
    this.name = 'RoutePathTakenError';
  }
}

/** What a PUT may change: everything but identity, status, landing page state and times of creation. */
export type FormChanges = Pick<
  Form,
  | 'name'
  | 'type'
  | 'inputFields'
  | 'topicIds'
  | 'doubleOptIn'
  | 'senderProfileId'
  | 'confirmationTemplateName'
  | 'routePath'
  | 'domain'
  | 'allowedOrigins'
  | 'updatedAt'
>;

/** What activate/deactivate and publish/unpublish change. */
export type FormStateChanges = Partial<Pick<Form, 'status' | 'landingPageStatus' | 'lastPublishedAt'>> & Pick<Form, 'updatedAt'>;

/** What messaging asks before deleting a sender profile, a template or a sending domain (a page's host, any port). */
export type FormReference = { senderProfileId: string } | { templateName: string } | { domain: string };

export interface FormRepository {
  get(accountId: string, formId: string): Promise<Form | null>;
  /** The account's forms, oldest first. */
  list(accountId: string): Promise<Form[]>;
  /** Throws RoutePathTakenError when the landing page's domain + routePath is taken. */
  create(form: Form, opts?: { tx?: Transaction }): Promise<Form>;
  /** Null when the form does not exist in the account. Throws RoutePathTakenError. */
  update(accountId: string, formId: string, changes: FormChanges): Promise<Form | null>;
  /**
   * Changes status / landing page state; `expect` guards the change (e.g. only from DRAFT or
   * UNPUBLISHED), so two racing requests cannot both make a transition. Null when no form matched.
   */
  setState(accountId: string, formId: string, changes: FormStateChanges, expect?: Partial<Pick<Form, 'status' | 'landingPageStatus'>>): Promise<Form | null>;
  /** False when it did not exist. */
  delete(accountId: string, formId: string): Promise<boolean>;
  /** How many of the account's forms name the sender profile / confirmation template, and up to `limit` of them by name. */
  referencing(accountId: string, ref: FormReference, limit?: number): Promise<{ count: number; forms: Array<{ id: string; name: string }> }>;
  /** The account's forms that collect the field, by name. */
  usingField(accountId: string, fieldId: string): Promise<FormFields[]>;
  /** Drops the field from the account's forms; returns how many changed. */
  removeField(accountId: string, fieldId: string): Promise<number>;
  /**
   * CROSS-ACCOUNT: the PUBLISHED PAGE form serving `routePath` on `domain` (null = the default host
   * of PUBLIC_BASE_URL; see domain/form.ts pageDomainOfHost), whatever account owns it. Only for the
   * public landing pages, which arrive without an account.
   */
  publishedPageAcrossAccounts(domain: string | null, routePath: string): Promise<Form | null>;
  /** CROSS-ACCOUNT: a form by id alone. Only for public submissions, which name a form but no account. */
  getAcrossAccounts(formId: string): Promise<Form | null>;
}

const toForm = (doc: FormDoc): Form => {
  const { _id, fieldIds: _fieldIds, ...rest } = doc;
  return { id: _id, ...rest, inputFields: rest.inputFields.map(toFormField) };
};

// Stored fieldRefs carry only the members of their kind (spec "FieldRef").
const toFormField = (f: FormField): FormField => ({
  ...f,
  fieldRef: f.fieldRef.type === 'BUILT_IN' ? { type: 'BUILT_IN', builtInField: f.fieldRef.builtInField } : { type: 'CUSTOM', fieldId: f.fieldRef.fieldId },
});

const toDoc = (form: Form): FormDoc => {
  const { id, ...rest } = form;
  return { _id: id, ...rest, fieldIds: customFieldIdsOf(form.inputFields) };
};

function routeTaken(err: unknown, at: { domain: string | null; routePath: string | null }): never {
  if (err instanceof DuplicateKeyError && at.routePath && err.index === ROUTE_INDEX) throw new RoutePathTakenError(at.domain, at.routePath);
  throw err;
}

export function formRepository(store: Store): FormRepository {
  const forms = store.collection<FormDoc>(FORMS, formSchema);
  return {
    async get(accountId, formId) {
      const doc = await forms.findOne({ _id: formId, accountId });
      return doc && toForm(doc);
    },
    async list(accountId) {
      return (await forms.find({ accountId }, { sort: { createdAt: 1, _id: 1 } })).map(toForm);
    },
    async create(form, opts) {
      try {
        await forms.insertOne(toDoc(form), opts);
      } catch (err) {
        routeTaken(err, form);
      }
      return form;
    },
    async update(accountId, formId, changes) {
      try {
        const set = { ...changes, fieldIds: customFieldIdsOf(changes.inputFields) };
        const doc = await forms.findOneAndUpdate({ _id: formId, accountId }, { $set: set }, { returnDocument: 'after' });
        return doc && toForm(doc);
      } catch (err) {
        routeTaken(err, changes);
      }
    },
    async setState(accountId, formId, changes, expect = {}) {
      const doc = await forms.findOneAndUpdate({ ...expect, _id: formId, accountId }, { $set: changes }, { returnDocument: 'after' });
      return doc && toForm(doc);
    },
    async delete(accountId, formId) {
      return (await forms.deleteOne({ _id: formId, accountId })) > 0;
    },
    async referencing(accountId, ref, limit = 50) {
      const filter = {
        accountId,
        ...('senderProfileId' in ref
          ? { senderProfileId: ref.senderProfileId }
          : 'templateName' in ref
            ? { confirmationTemplateName: ref.templateName }
            : { domain: { $regex: `^${ref.domain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:[0-9]+)?$` } }),
      };
      const [count, some] = await Promise.all([forms.countDocuments(filter), forms.find(filter, { sort: { name: 1, _id: 1 }, limit })]);
      return { count, forms: some.map((d) => ({ id: d._id, name: d.name })) };
    },
    async usingField(accountId, fieldId) {
      const docs = await forms.find({ accountId, fieldIds: fieldId.toLowerCase() }, { sort: { name: 1, _id: 1 } });
      // Every input's key, built-ins included, so a usage's area names the input's position.
      return docs.map((d) => ({ id: d._id, name: d.name, status: d.status, fieldIds: d.inputFields.map((f) => f.fieldId) }));
    },
    async removeField(accountId, fieldId) {
      const id = fieldId.toLowerCase();
      // The input goes too: a form never offers an input for a field that no longer exists.
      return (await forms.updateMany({ accountId, fieldIds: id }, { $pull: { fieldIds: id, inputFields: { fieldId: id } } })).modifiedCount;
    },
    async publishedPageAcrossAccounts(domain, routePath) {
      const doc = await acrossAccounts(forms).findOne({ domain: domain ? domain.toLowerCase() : null, routePath, type: 'PAGE', landingPageStatus: 'PUBLISHED' });
      return doc && toForm(doc);
    },
    async getAcrossAccounts(formId) {
      const doc = await acrossAccounts(forms).findOne({ _id: formId });
      return doc && toForm(doc);
    },
  };
}
