// GET /email-messages on the embedded store: a page of every filter the list takes (none, address,
// template, status) walks an index in the list's order (the address's, else the account's) and sorts
// nothing, even where many messages share createdAt (a batch, a broadcast page); its total is a kept
// count (an address's few messages: their index entries are counted). SQLite's query plan and the
// count's statement prove it; the pages are checked against the same order computed in JavaScript.
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { listEmailMessages } from '../src/mail/app/email-messages';
import { MESSAGE_STATUSES, messageCollections, messagesOf, type EmailMessageDoc, type MessageCollections } from '../src/mail/store/messages';
import { messageRecord } from './support/report-messages';

const A = 'acct-a';
let tmp: TempStore;
let messages: MessageCollections;
let stored: EmailMessageDoc[];

beforeAll(async () => {
  tmp = await openTempStore('message-list');
  messages = messageCollections(tmp.store);
  // 3,000 messages accepted 500 at a time: each batch shares one createdAt
  const docs = Array.from({ length: 3_000 }, (_, i) => ({
    ...messageRecord(`m-${String((i * 7919) % 3_000).padStart(4, '0')}`, {}),
    createdAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 500) * 60_000),
    email: `r${i % 40}@example.org`,
    templateName: i % 3 ? 'receipt' : 'welcome',
    status: MESSAGE_STATUSES[i % MESSAGE_STATUSES.length],
  }));
  const repo = messagesOf(messages, A);
  await tmp.store.transaction(async (tx) => repo.insertMany(docs.map((message) => ({ message, body: null })), tx));
  await messagesOf(messages, 'acct-b').insert({ ...messageRecord('m-other', {}), createdAt: new Date(Date.UTC(2027, 0, 1)) }, null);
  stored = docs.map((d) => ({ ...d, accountId: A }));
}, 60_000);
afterAll(() => tmp.close());

const newestFirst = (a: EmailMessageDoc, b: EmailMessageDoc) => +b.createdAt - +a.createdAt || (a._id < b._id ? 1 : -1);
/** The embedded collection's test hooks: SQLite's plan for a find, and the statement of a count. */
interface Embedded {
  explain(f: object, o: object): { plan: string[] };
  table: { countQuery(db: unknown, f: object): { sql: string; native: boolean } };
}
const embedded = () => messages.messages as unknown as Embedded;
const planOf = (filter: Record<string, unknown>) => embedded().explain({ accountId: A, ...filter }, { sort: { createdAt: -1, _id: -1 }, skip: 100, limit: 50 }).plan.join('\n');
const countOf = (filter: Record<string, unknown>) => {
  const { table } = embedded();
  return table.countQuery((tmp.store as unknown as { reader(t: unknown): unknown }).reader(table), { accountId: A, ...filter });
};

describe.each([
  ['no filter', {}, 'accountId_1_createdAt_-1__id_-1', /FROM "email_messages\.counts" /],
  ['an address', { email: 'r7@example.org' }, 'accountId_1_email_1_createdAt_-1__id_-1', /^SELECT count\(\*\) AS n FROM "email_messages" WHERE/],
  ['a template', { templateName: 'welcome' }, 'accountId_1_createdAt_-1__id_-1', /FROM "email_messages\.counts\.accountId_templateName" /],
  ['a status', { status: 'BOUNCED' }, 'accountId_1_createdAt_-1__id_-1', /FROM "email_messages\.counts\.accountId_status" /],
] as const)('a list page with %s', (_, filter, index, counted) => {
  it('is the newest-first slice of the matches, with their total', async () => {
    const matches = stored.filter((m) => Object.entries(filter).every(([k, v]) => m[k as keyof EmailMessageDoc] === v)).sort(newestFirst);
    const pageSize = Object.keys(filter).length ? 5 : 50;
    const { items, totalItems } = await listEmailMessages({ messages }, A, { ...filter, pageNumber: 3, pageSize });
    expect(totalItems).toBe(matches.length);
    expect(items.map((m) => m._id)).toEqual(matches.slice(2 * pageSize, 3 * pageSize).map((m) => m._id));
  });

  it(`walks ${index} and sorts nothing`, () => {
    const plan = planOf(filter);
    expect(plan).toMatch(new RegExp(`^SEARCH email_messages USING INDEX email_messages\\.${index.replace(/[.]/g, '\\.')} `));
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  it('gets its total without stepping through documents', () => {
    const count = countOf(filter);
    expect(count.native).toBe(true); // a kept count, or index entries alone: answered at once
    expect(count.sql).toMatch(counted);
  });
});
