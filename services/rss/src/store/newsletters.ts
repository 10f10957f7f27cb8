// The rss service's newsletters, as far as they exist yet: their templates (the usage report's
// input). Every query is scoped to one account.
import { mongoose, type Store } from '@mailer/store';
import type { NewsletterStatus, NewsletterTemplates } from '../domain/merge-tags';

export interface NewsletterDoc {
  _id: string;
  accountId: string;
  name: string;
  status: NewsletterStatus;
  subjectPattern: string;
  htmlContent: string;
  createdAt: Date;
}

export const NEWSLETTERS = 'newsletters';

export const newsletterSchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    status: { type: String, required: true, enum: ['ACTIVE', 'PAUSED'] },
    subjectPattern: { type: String, default: '' },
    htmlContent: { type: String, default: '' },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
newsletterSchema.index({ accountId: 1, name: 1 });

export interface NewsletterRepository {
  /** The account's newsletters with their templates, by name. */
  templatesOf(accountId: string): Promise<NewsletterTemplates[]>;
}

export function newsletterRepository(store: Store): NewsletterRepository {
  const newsletters = store.collection<NewsletterDoc>(NEWSLETTERS, newsletterSchema);
  return {
    async templatesOf(accountId) {
      const docs = await newsletters.find({ accountId }, { sort: { name: 1, _id: 1 }, projection: { name: 1, status: 1, subjectPattern: 1, htmlContent: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name, status: d.status, subjectPattern: d.subjectPattern, htmlContent: d.htmlContent }));
    },
  };
}
