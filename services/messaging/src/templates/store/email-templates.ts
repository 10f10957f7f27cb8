// Email templates (collection 'email_templates'), the API contract "Email templates". A template is addressed
// by its name, unique per account (unique index; a clash is `409 template_name_exists`). The Liquid
// sources are stored as sent (already compiled once at save, so a stored template always parses),
// with the top-level `variables` they read and `version`, which counts saves (1 on create, +1 on
// every PUT). Every query filters by accountId first.
import { conflict } from '@mailer/kit';
import { DuplicateKeyError, mongoose, type Collection, type Store } from '@mailer/store';

const { Schema } = mongoose;

export interface TemplateTracking {
  opens: boolean;
  clicks: boolean;
}

export interface EmailTemplateDoc {
  _id: string;
  accountId: string;
  name: string;
  subject: string;
  html: string;
  /** null: the text part is derived from the rendered html at each render. */
  text: string | null;
  senderProfileId: string | null;
  tracking: TemplateTracking;
  variables: string[];
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export const emailTemplateSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    subject: { type: String, required: true },
    html: { type: String, required: true },
    text: { type: String, default: null },
    senderProfileId: { type: String, default: null },
    tracking: { opens: { type: Boolean, required: true }, clicks: { type: Boolean, required: true } },
    variables: { type: [String], default: [] },
    version: { type: Number, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
emailTemplateSchema.index({ accountId: 1, name: 1 }, { unique: true });
// "Is this sender profile in use": one indexed query.
emailTemplateSchema.index({ accountId: 1, senderProfileId: 1 });

export const EMAIL_TEMPLATES = 'email_templates';

export const emailTemplateCollection = (store: Store): Collection<EmailTemplateDoc> =>
  store.collection<EmailTemplateDoc>(EMAIL_TEMPLATES, emailTemplateSchema);

/** What a PUT changes (name never: it is the template's address). */
export type EmailTemplateChanges = Pick<EmailTemplateDoc, 'subject' | 'html' | 'text' | 'senderProfileId' | 'tracking' | 'variables' | 'updatedAt'>;

export const templateNameExists = (name: string) =>
  conflict('template_name_exists', `an email template named "${name}" already exists`, [{ path: 'body.name', problem: 'already used by another template of the account' }]);

/** One account's email templates. */
export function emailTemplatesOf(store: Store, accountId: string) {
  const templates = emailTemplateCollection(store);
  return {
    accountId,
    /** By name. */
    list: (): Promise<EmailTemplateDoc[]> => templates.find({ accountId }, { sort: { name: 1 } }),
    get: (name: string): Promise<EmailTemplateDoc | null> => templates.findOne({ accountId, name }),
    /** Names of the templates that name the sender profile, by name. */
    async namingSender(senderProfileId: string): Promise<string[]> {
      const docs = await templates.find({ accountId, senderProfileId }, { sort: { name: 1 }, projection: { name: 1 } });
      return docs.map((d) => d.name);
    },
    async insert(doc: Omit<EmailTemplateDoc, 'accountId'>): Promise<EmailTemplateDoc> {
      const stored: EmailTemplateDoc = { ...doc, accountId };
      try {
        await templates.insertOne(stored);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw templateNameExists(doc.name);
        throw err;
      }
      return stored;
    },
    /** Saves a new version; null when the template does not exist (any more). */
    update: (name: string, set: EmailTemplateChanges): Promise<EmailTemplateDoc | null> =>
      templates.findOneAndUpdate({ accountId, name }, { $set: set, $inc: { version: 1 } }, { returnDocument: 'after' }),
    /** False when it did not exist. */
    remove: async (name: string): Promise<boolean> => (await templates.deleteOne({ accountId, name })) > 0,
  };
}
export type EmailTemplateRepository = ReturnType<typeof emailTemplatesOf>;
