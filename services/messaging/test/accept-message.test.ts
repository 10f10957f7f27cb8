// acceptMessage on a real embedded store: what is stored (message, body, outbox job) in each case,
// the order of the refusals, tracking per the template's flags, List-Unsubscribe only for marketing
// kinds, and that a failed render or a refusal leaves nothing behind. The recipient directory (the
// subscriber service over gRPC in the process) is given as its answers here; the real path is in
// gateway/test/email-messages.int.test.ts.
import { randomUUID } from 'node:crypto';
import { DomainError } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { acceptMessage, type AcceptDeps, type AcceptInput, type Recipient } from '../src/mail/app/accept-message';
import { createEmailTemplate } from '../src/templates/app/email-templates';
import { publicLinks } from '../src/readers/app/public-links';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { createSenderProfile } from '../src/templates/app/sender-profiles';
import { messageCollections, messagesOf } from '../src/mail/store/messages';
import { outboxRepository } from '@mailer/nats';
import { suppressionCollection, suppressionsOf } from '../src/readers/store/suppressions';
import { emailTemplateCollection } from '../src/templates/store/email-templates';
import { DuplicateKeyError } from '@mailer/store';

const A = '0193b6f0-0000-7000-8000-00000000000a';
let tmp: TempStore;
let deps: AcceptDeps;
let recipients: Map<string, Recipient>;
let published: number;
const links = publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] });

beforeEach(async () => {
  tmp = await openTempStore('accept');
  recipients = new Map();
  published = 0;
  deps = {
    store: tmp.store,
    messages: messageCollections(tmp.store),
    suppressions: suppressionCollection(tmp.store),
    outbox: outboxRepository(tmp.store),
    recipients: { recipientByEmail: async (_accountId, email) => recipients.get(email) ?? null },
    links,
    domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }),
    now: () => new Date('2026-01-01T10:00:00Z'),
    newId: randomUUID,
    notify: () => undefined,
    awaitPublished: async () => {
      published++;
      return true;
    },
  };
  const catalog = { store: tmp.store, now: deps.now, newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) };
  await createSenderProfile(catalog, A, { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop', replyTo: 'help@example.com' });
  await createEmailTemplate(catalog, A, {
    name: 'welcome',
    subject: 'Hi {{ subscriber.firstName | default: "there" }}',
    html: '<body><p>{{ note }}</p><a href="https://shop.example/a">a</a>{% if links %}<a href="{{ links.unsubscribe }}">unsubscribe</a>{% endif %}</body>',
  });
  await createEmailTemplate(catalog, A, { name: 'untracked', subject: 's', html: '<a href="https://shop.example/a">a</a>', tracking: { opens: false, clicks: false } });
  // Hostile with the caller's data only (saved; one hostile alone is refused at save).
  await createEmailTemplate(catalog, A, { name: 'hostile', subject: 's', html: '{% for i in (1..n) %}xxxxxxxxxxxxxxxx{% endfor %}' });
});
afterEach(() => tmp.close());

const input = (extra: Partial<AcceptInput> = {}): AcceptInput => ({ accountId: A, kind: 'TRANSACTIONAL', templateName: 'welcome', email: 'Ann@Example.org', topicId: null, ...extra });
const outbox = () => tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({});

async function refusal(p: Promise<unknown>): Promise<{ errorId: string; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a refusal');
}

it('stores the rendered, instrumented message, its body and one email job in the outbox, then waits for the publish', async () => {
  recipients.set('ann@example.org', { id: 'sub-1', email: 'ann@example.org', firstName: 'Ann', fields: {}, status: 'UNSUBSCRIBED' });
  const accepted = await acceptMessage(deps, input({ substitutionData: { note: '<b>hi</b>' }, eventProperties: { orderId: 'o-1' } }));
  expect(accepted.status).toBe('QUEUED');
  const repo = messagesOf(deps.messages, A);
  const message = (await repo.get(accepted.messageId))!;
  expect(message).toMatchObject({
    kind: 'TRANSACTIONAL', templateName: 'welcome', email: 'ann@example.org', subscriberId: 'sub-1', subject: 'Hi Ann',
    fromEmail: 'shop@example.com', fromName: 'The Shop', replyTo: 'help@example.com', links: ['https://shop.example/a'],
    tracking: { opens: true, clicks: true }, status: 'QUEUED', suppressionReason: null, eventProperties: { orderId: 'o-1' },
    history: [{ status: 'QUEUED', at: new Date('2026-01-01T10:00:00Z') }], attempts: [],
  });
  const body = (await repo.body(accepted.messageId))!;
  expect(body.html).toContain('&lt;b&gt;hi&lt;/b&gt;');
  expect(body.html).toContain(`href="${links.clickUrl(A, accepted.messageId, 0)}"`);
  expect(body.html).toContain(`<img src="${links.openUrl(A, accepted.messageId)}"`);
  expect(body.html).not.toContain('https://shop.example/a');
  expect(body.headers).toEqual({}); // transactional: no List-Unsubscribe
  expect(body.html).not.toContain('orderId'); // eventProperties are never rendered
  const jobs = await outbox();
  expect(jobs).toEqual([expect.objectContaining({ subject: `jobs.email.${A}`, payload: { accountId: A, messageId: accepted.messageId } })]);
  expect(published).toBe(1);
});

it('marketing kinds get List-Unsubscribe headers and a links.unsubscribe value, which is not rewritten', async () => {
  const subscriber: Recipient = { id: randomUUID(), email: 'ann@example.org', firstName: 'Ann', fields: {}, status: 'ACTIVE' };
  const topicId = randomUUID();
  const accepted = await acceptMessage(deps, input({ kind: 'AUTOMATION', subscriber, topicId }));
  const body = (await messagesOf(deps.messages, A).body(accepted.messageId))!;
  const unsubscribe = body.headers['List-Unsubscribe']!.slice(1, -1);
  expect(body.headers).toEqual({ 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
  expect(links.verify('unsubscribe', unsubscribe.split('/u/')[1]!)).toMatchObject({ accountId: A, subscriberId: subscriber.id, topicId, messageId: accepted.messageId });
  expect(body.html).toContain(`<a href="${unsubscribe}">unsubscribe</a>`);
  expect((await messagesOf(deps.messages, A).get(accepted.messageId))!.links).toEqual(['https://shop.example/a']);
});

it('follows the template\'s tracking flags', async () => {
  const accepted = await acceptMessage(deps, input({ templateName: 'untracked' }));
  const body = (await messagesOf(deps.messages, A).body(accepted.messageId))!;
  expect(body.html).toContain('href="https://shop.example/a"');
  expect(body.html).not.toContain('<img');
  expect((await messagesOf(deps.messages, A).get(accepted.messageId))!.links).toEqual([]);
});

it('a suppressed address or a BLOCKED subscriber is stored SUPPRESSED, without body or job, and nothing waits', async () => {
  await suppressionsOf(deps.suppressions, A).add({ _id: randomUUID(), email: 'ann@example.org', reason: 'COMPLAINT', createdAt: new Date(), messageId: null });
  recipients.set('bob@example.org', { id: 'sub-2', email: 'bob@example.org', firstName: null, fields: {}, status: 'BLOCKED' });
  const suppressed = await acceptMessage(deps, input());
  const blocked = await acceptMessage(deps, input({ email: 'bob@example.org' }));
  const repo = messagesOf(deps.messages, A);
  expect(await repo.get(suppressed.messageId)).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'COMPLAINT', history: [{ status: 'SUPPRESSED' }] });
  expect(await repo.get(blocked.messageId)).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'BLOCKED', subscriberId: 'sub-2' });
  expect(await repo.body(suppressed.messageId)).toBeNull();
  expect(await outbox()).toEqual([]);
  expect(published).toBe(0);
});

it('refuses in the API contract\'s order and stores nothing: invalid_email, reserved_substitution_key, template_not_found, template_render_failed', async () => {
  expect((await refusal(acceptMessage(deps, input({ email: 'nope', templateName: 'missing' })))).errorId).toBe('invalid_email');
  expect((await refusal(acceptMessage(deps, input({ templateName: 'missing', substitutionData: { event: 1 } })))).errorId).toBe('reserved_substitution_key');
  expect((await refusal(acceptMessage(deps, input({ templateName: 'missing' })))).errorId).toBe('template_not_found');
  const render = await refusal(acceptMessage(deps, input({ templateName: 'hostile', substitutionData: { n: 100_000_000 } })));
  expect(render.errorId).toBe('template_render_failed');
  expect(render.message).toMatch(/^html: /);
  expect((await messagesOf(deps.messages, A).list({ pageNumber: 1, pageSize: 10 })).totalItems).toBe(0);
  expect(await outbox()).toEqual([]);
});

it('409 sender_profile_required for an account without sender profile', async () => {
  const B = randomUUID();
  await createEmailTemplate({ store: tmp.store, now: deps.now, newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) }, B, { name: 'welcome', subject: 's', html: 'x' });
  expect((await refusal(acceptMessage(deps, input({ accountId: B })))).errorId).toBe('sender_profile_required');
});

describe('dedupe key', () => {
  it('a second send with the same key answers the first message and stores nothing new, even when the template is gone', async () => {
    const first = await acceptMessage(deps, input({ dedupeKey: 'form-confirmation:s-1' }));
    const again = await acceptMessage(deps, input({ dedupeKey: 'form-confirmation:s-1', templateName: 'missing', email: 'other@example.org' }));
    expect(again).toEqual(first);
    expect((await messagesOf(deps.messages, A).list({ pageNumber: 1, pageSize: 10 })).totalItems).toBe(1);
    expect(await outbox()).toHaveLength(1);
    expect(published).toBe(1);
  });

  it('concurrent sends with one key: one message, one job, every caller gets its id (the unique index decides)', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => acceptMessage(deps, input({ dedupeKey: 'k-race' }))));
    expect(new Set(answers.map((a) => a.messageId)).size).toBe(1);
    expect((await messagesOf(deps.messages, A).list({ pageNumber: 1, pageSize: 10 })).totalItems).toBe(1);
    expect(await outbox()).toHaveLength(1);
  });

  it('other keys, no key, and the same key in another account are other messages', async () => {
    const B = randomUUID();
    const catalog = { store: tmp.store, now: deps.now, newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) };
    await createSenderProfile(catalog, B, { name: 'B', fromEmail: 'b@example.com', fromName: 'B' });
    await createEmailTemplate(catalog, B, { name: 'welcome', subject: 's', html: 'x' });
    const ids = [
      (await acceptMessage(deps, input({ dedupeKey: 'k1' }))).messageId,
      (await acceptMessage(deps, input({ dedupeKey: 'k2' }))).messageId,
      (await acceptMessage(deps, input())).messageId,
      (await acceptMessage(deps, input({ dedupeKey: '' }))).messageId,
      (await acceptMessage(deps, input({ accountId: B, dedupeKey: 'k1' }))).messageId,
    ];
    expect(new Set(ids).size).toBe(5);
  });

  it('a suppressed send with a key answers SUPPRESSED again', async () => {
    await suppressionsOf(deps.suppressions, A).add({ _id: randomUUID(), email: 'ann@example.org', reason: 'HARD_BOUNCE', createdAt: new Date(), messageId: null });
    const first = await acceptMessage(deps, input({ dedupeKey: 'k-s' }));
    expect(first.status).toBe('SUPPRESSED');
    expect(await acceptMessage(deps, input({ dedupeKey: 'k-s' }))).toEqual(first);
  });

  it('a key longer than 200 characters is refused with validation_failed', async () => {
    const refused = await refusal(acceptMessage(deps, input({ dedupeKey: 'k'.repeat(201) })));
    expect(refused.errorId).toBe('validation_failed');
  });
});

describe('sender profile', () => {
  it('the named profile is used over the template\'s and the default; unknown is sender_profile_not_found', async () => {
    const catalog = { store: tmp.store, now: deps.now, newId: randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) };
    const news = await createSenderProfile(catalog, A, { name: 'News', fromEmail: 'news@example.com', fromName: 'News' });
    const named = await acceptMessage(deps, input({ senderProfileId: news._id }));
    expect(await messagesOf(deps.messages, A).get(named.messageId)).toMatchObject({ senderProfileId: news._id, fromEmail: 'news@example.com', fromName: 'News' });
    const byDefault = await acceptMessage(deps, input({ senderProfileId: '' }));
    expect(await messagesOf(deps.messages, A).get(byDefault.messageId)).toMatchObject({ fromEmail: 'shop@example.com' });
    expect((await refusal(acceptMessage(deps, input({ senderProfileId: randomUUID() })))).errorId).toBe('sender_profile_not_found');
  });
});

describe('built-in confirmation template', () => {
  const values = { confirmUrl: 'https://mail.example.test/public/confirm/tok-1?a=1&b=2', form: { id: 'f-1', name: '<b>Evil & Co</b>' }, expiresOn: '1 December 2026, 10:36 UTC', expiresAt: '2026-12-01T10:36:00.000Z', expiryDays: 7 };

  it('renders the confirm link, the form name escaped and the expiry; transactional: no List-Unsubscribe, untracked, no templateName', async () => {
    const accepted = await acceptMessage(deps, input({ templateName: '', builtinTemplate: 'FORM_CONFIRMATION', substitutionData: values }));
    const repo = messagesOf(deps.messages, A);
    const message = (await repo.get(accepted.messageId))!;
    expect(message).toMatchObject({ kind: 'TRANSACTIONAL', templateName: null, status: 'QUEUED', links: [], tracking: { opens: false, clicks: false }, fromEmail: 'shop@example.com' });
    expect(message.subject).toBe('Please confirm your subscription to <b>Evil & Co</b>'); // a header: not HTML
    const body = (await repo.body(accepted.messageId))!;
    expect(body.headers).toEqual({});
    expect(body.html).toContain('href="https://mail.example.test/public/confirm/tok-1?a=1&amp;b=2"');
    expect(body.html).toContain('&lt;b&gt;Evil &amp; Co&lt;/b&gt;');
    expect(body.html).not.toContain('<b>Evil');
    expect(body.html).toContain('valid until 1 December 2026, 10:36 UTC');
    expect(body.html).not.toContain('<img');
    expect(body.text).toContain('https://mail.example.test/public/confirm/tok-1?a=1&b=2');
    expect(body.text).toContain('signed up with this address to <b>Evil & Co</b>.');
  });

  it('a named template wins over the built-in one', async () => {
    const accepted = await acceptMessage(deps, input({ builtinTemplate: 'FORM_CONFIRMATION', substitutionData: { note: 'mine' } }));
    expect(await messagesOf(deps.messages, A).get(accepted.messageId)).toMatchObject({ templateName: 'welcome', subject: 'Hi there' });
  });
});

describe('refusals at send time of what was valid when saved', () => {
  it('a stored template that no longer compiles (saved by an older engine) is refused with its syntax error; nothing stored', async () => {
    // A fault the API cannot produce (it refuses such a template on save): the stored source edited.
    await emailTemplateCollection(tmp.store).updateOne({ accountId: A, name: 'untracked' }, { $set: { html: '{% for x in %}', version: 99 } });
    expect((await refusal(acceptMessage(deps, input({ templateName: 'untracked' })))).errorId).toBe('template_syntax_error');
    expect((await messagesOf(deps.messages, A).list({ pageNumber: 1, pageSize: 10 })).totalItems).toBe(0);
    expect(await outbox()).toEqual([]);
  });

  it('with MAIL_DOMAIN_VERIFICATION=required, a profile of a domain the account has not verified: sender_domain_not_verified; nothing stored', async () => {
    const required = { ...deps, domains: domainPolicy({ store: tmp.store, verification: 'required', keys: null, operatorKeys: {} }) };
    expect((await refusal(acceptMessage(required, input()))).errorId).toBe('sender_domain_not_verified');
    expect(await outbox()).toEqual([]);
  });

  it('a store conflict that is not the dedupe key (a message id used twice) is not taken for a repeated send: it fails', async () => {
    const sameId = { ...deps, newId: () => '0193b6f0-0000-7000-8000-0000000000ff' };
    await acceptMessage(sameId, input({ dedupeKey: 'first' }));
    await expect(acceptMessage(sameId, input({ dedupeKey: 'second' }))).rejects.toBeInstanceOf(DuplicateKeyError);
    expect((await messagesOf(deps.messages, A).list({ pageNumber: 1, pageSize: 10 })).totalItems).toBe(1);
  });
});
