// Fields, tags and topics of an account: schemas and repositories. Times are stored as Dates (as in
// every service); the definitions (TagDef, TopicDef) and so the API and the facts carry ISO strings.
import { conflict } from '@mailer/kit';
import { DuplicateKeyError, isoTime, mongoose, type Store, type Transaction } from '@mailer/store';
import { FIELD_TYPES, type FieldDef, type FieldOption, type TagDef, type TopicDef } from '../domain/types';

export interface FieldDoc extends Omit<FieldDef, 'id'> {
  _id: string;
  accountId: string;
  createdAt: Date;
  updatedAt: Date;
}

const optionSchema = new mongoose.Schema<FieldOption>(
  { id: { type: String, required: true }, label: { type: String, required: true }, position: { type: Number, required: true }, active: { type: Boolean, required: true } },
  { _id: false },
);

export const fieldSchema = new mongoose.Schema<FieldDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    label: { type: String, required: true },
    personalizationTagName: { type: String, required: true },
    fieldType: { type: String, required: true, enum: FIELD_TYPES },
    required: { type: Boolean, required: true },
    internal: { type: Boolean, required: true },
    active: { type: Boolean, required: true },
    position: { type: Number, required: true },
    options: { type: [optionSchema], default: [] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// A personalization tag name names one field of the account (also after archiving).
fieldSchema.index({ accountId: 1, personalizationTagName: 1 }, { unique: true });
fieldSchema.index({ accountId: 1, position: 1 });

export interface TagDoc {
  _id: string;
  accountId: string;
  name: string;
  /** Lowercased name: tag names are unique per account ignoring case. */
  nameKey: string;
  createdAt: Date;
}

export const tagSchema = new mongoose.Schema<TagDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    nameKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
tagSchema.index({ accountId: 1, nameKey: 1 }, { unique: true });

export interface TopicDoc extends Omit<TopicDef, 'id' | 'createdAt'> {
  _id: string;
  accountId: string;
  createdAt: Date;
  updatedAt: Date;
}

export const topicSchema = new mongoose.Schema<TopicDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    label: { type: String, required: true },
    description: { type: String, default: null },
    active: { type: Boolean, required: true },
    isDefault: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
topicSchema.index({ accountId: 1, createdAt: 1 });

export const fieldFromDoc = (d: FieldDoc): FieldDef => ({
  id: d._id,
  label: d.label,
  personalizationTagName: d.personalizationTagName,
  fieldType: d.fieldType,
  required: d.required,
  internal: d.internal,
  active: d.active,
  position: d.position,
  options: (d.options ?? []).map((o) => ({ id: o.id, label: o.label, position: o.position, active: o.active })),
});

export const tagFromDoc = (d: TagDoc): TagDef => ({ id: d._id, name: d.name, createdAt: isoTime(d.createdAt) });

export const topicFromDoc = (d: TopicDoc): TopicDef => ({
  id: d._id,
  label: d.label,
  description: d.description ?? null,
  active: d.active,
  isDefault: d.isDefault,
  createdAt: isoTime(d.createdAt),
});

/** Fields, tags and topics of one account: every method takes the accountId (none reads or writes across accounts). */
export function catalogRepository(store: Store) {
  const fields = store.collection<FieldDoc>('fields', fieldSchema);
  const tags = store.collection<TagDoc>('tags', tagSchema);
  const topics = store.collection<TopicDoc>('topics', topicSchema);

  return {
    // ---- fields ----
    async listFields(accountId: string): Promise<FieldDef[]> {
      return (await fields.find({ accountId }, { sort: { position: 1, _id: 1 } })).map(fieldFromDoc);
    },
    async getField(accountId: string, id: string): Promise<FieldDef | null> {
      const d = await fields.findOne({ accountId, _id: id });
      return d ? fieldFromDoc(d) : null;
    },
    async insertField(tx: Transaction, accountId: string, f: FieldDef, now: string): Promise<void> {
      const { id, ...rest } = f;
      try {
        await fields.insertOne({ _id: id, accountId, ...rest, createdAt: new Date(now), updatedAt: new Date(now) }, { tx });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('personalization_tag_name_exists', `a field with personalizationTagName ${f.personalizationTagName} already exists`);
        throw err;
      }
    },
    async updateField(tx: Transaction, accountId: string, id: string, set: Partial<Omit<FieldDef, 'id'>>, now: string): Promise<void> {
      await fields.updateOne({ accountId, _id: id }, { $set: { ...set, updatedAt: new Date(now) } }, { tx });
    },
    async deleteField(tx: Transaction, accountId: string, id: string): Promise<void> {
      await fields.deleteOne({ accountId, _id: id }, { tx });
    },

    // ---- tags ----
    async listTags(accountId: string): Promise<TagDef[]> {
      return (await tags.find({ accountId }, { sort: { nameKey: 1, _id: 1 } })).map(tagFromDoc);
    },
    async getTag(accountId: string, id: string): Promise<TagDef | null> {
      const d = await tags.findOne({ accountId, _id: id });
      return d ? tagFromDoc(d) : null;
    },
    async findTags(accountId: string, ids: string[]): Promise<TagDef[]> {
      if (ids.length === 0) return [];
      return (await tags.find({ accountId, _id: { $in: ids } })).map(tagFromDoc);
    },
    async insertTag(tx: Transaction, accountId: string, t: TagDef, key: string): Promise<void> {
      try {
        await tags.insertOne({ _id: t.id, accountId, name: t.name, nameKey: key, createdAt: new Date(t.createdAt) }, { tx });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('tag_name_exists', `a tag named "${t.name}" already exists`);
        throw err;
      }
    },
    async renameTag(tx: Transaction, accountId: string, id: string, name: string, key: string): Promise<void> {
      try {
        await tags.updateOne({ accountId, _id: id }, { $set: { name, nameKey: key } }, { tx });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('tag_name_exists', `a tag named "${name}" already exists`);
        throw err;
      }
    },
    async deleteTag(tx: Transaction, accountId: string, id: string): Promise<void> {
      await tags.deleteOne({ accountId, _id: id }, { tx });
    },

    // ---- topics ----
    async listTopics(accountId: string): Promise<TopicDef[]> {
      return (await topics.find({ accountId }, { sort: { createdAt: 1, _id: 1 } })).map(topicFromDoc);
    },
    async getTopic(accountId: string, id: string): Promise<TopicDef | null> {
      const d = await topics.findOne({ accountId, _id: id });
      return d ? topicFromDoc(d) : null;
    },
    async insertTopic(tx: Transaction, accountId: string, t: TopicDef): Promise<void> {
      const { id, ...rest } = t;
      const createdAt = new Date(t.createdAt);
      await topics.insertOne({ _id: id, accountId, ...rest, createdAt, updatedAt: createdAt }, { tx });
    },
    async updateTopic(tx: Transaction, accountId: string, id: string, set: Partial<Omit<TopicDef, 'id'>>, now: string): Promise<void> {
      // createdAt never changes (callers pass the whole definition as `set`): only updatedAt is written
      const { createdAt: _createdAt, ...rest } = set;
      await topics.updateOne({ accountId, _id: id }, { $set: { ...rest, updatedAt: new Date(now) } }, { tx });
    },
    async deleteTopic(tx: Transaction, accountId: string, id: string): Promise<void> {
      await topics.deleteOne({ accountId, _id: id }, { tx });
    },
  };
}
export type CatalogRepository = ReturnType<typeof catalogRepository>;
