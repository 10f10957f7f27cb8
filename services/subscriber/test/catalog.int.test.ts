// The field catalog, tags and topics over real gRPC, with the four services that report field usages
// (segment, form, messaging, rss) running as real processes, plus a second subscriber service whose
// rss address answers nothing (field_usage_unknown).
import { status } from '@grpc/grpc-js';
import { createClient } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { freePort, startService, type RunningService } from '@mailer/testing';
import {
  add,
  addField,
  addTag,
  addTopic,
  type Client,
  data,
  type Env,
  errorOf,
  eventsOf,
  FT,
  fieldId,
  list,
  newAccount,
  num,
  opt,
  S,
  startEnv,
  text,
} from './support';

let env: Env;
let degraded: RunningService;
let degradedClient: Client;

beforeAll(async () => {
  env = await startEnv({}, ['segment', 'form', 'messaging', 'rss']);
  // A second subscriber process with its own data and address, whose rss address answers nothing.
  const peers = { ...env.mesh.env, SUBSCRIBER_GRPC_ADDR: undefined, RSS_GRPC_ADDR: `127.0.0.1:${await freePort()}` };
  degraded = await startService('subscriber', { NATS_URL: env.nats.url, FIELD_USAGE_DEADLINE_MS: '500', ...peers });
  degradedClient = createClient(subscriberV1.SubscriberServiceClient, degraded.address, 20_000);
}, 60_000);

afterAll(async () => {
  degradedClient?.close();
  await degraded?.stop();
  await env?.stop();
});

const c = () => env.client;
const fieldsOf = async (a: string, includeArchived = false) => (await c().listFields({ accountId: a, includeArchived })).fields;

describe('field catalog', () => {
  it('lists the built-ins EMAIL and FIRST_NAME first, then custom fields by position', async () => {
    const a = newAccount();
    const f1 = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT);
    const f2 = await addField(c(), a, 'Work email', FT.FIELD_TYPE_EMAIL, { required: true, internal: true });
    const fields = await fieldsOf(a);
    expect(fields.map((f) => [f.ref?.ref?.$case, f.ref?.ref?.value, f.personalizationTagName, f.position])).toEqual([
      ['builtInField', subscriberV1.BuiltInField.BUILT_IN_FIELD_EMAIL, 'email', 0],
      ['builtInField', subscriberV1.BuiltInField.BUILT_IN_FIELD_FIRST_NAME, 'first_name', 1],
      ['fieldId', fieldId(f1), 'company', 2],
      ['fieldId', fieldId(f2), 'work_email', 3],
    ]);
    expect(fields[0]).toMatchObject({ fieldType: FT.FIELD_TYPE_EMAIL, active: true, required: true });
    expect(fields[3]).toMatchObject({ fieldType: FT.FIELD_TYPE_EMAIL, required: true, internal: true, active: true, options: [] });
    expect((await c().getField({ accountId: a, fieldId: fieldId(f2) })).field).toEqual(f2);
    expect((await c().getField({ accountId: a, fieldId: 'FIRST_NAME' })).field).toEqual(fields[1]);
  });

  it('derives personalization tag names from labels: ASCII, unique in the account (built-ins included), stable after relabeling', async () => {
    const a = newAccount();
    const names = [];
    for (const label of ['Email', 'First name', 'Ünïcödé Çafé', 'Ünicode cafe', '2nd phone', '!!!']) names.push((await addField(c(), a, label, FT.FIELD_TYPE_TEXT)).personalizationTagName);
    expect(names).toEqual(['email_2', 'first_name_2', 'unicode_cafe', 'unicode_cafe_2', 'f_2nd_phone', 'field']);
    const f = (await fieldsOf(a))[4];
    const relabeled = (await c().updateField({ accountId: a, fieldId: fieldId(f), label: 'Something else', optionsGiven: false, options: [] })).field!;
    expect(relabeled).toMatchObject({ label: 'Something else', personalizationTagName: 'unicode_cafe' });
    // another account may use the same names
    expect((await addField(c(), newAccount(), 'Ünïcödé Çafé', FT.FIELD_TYPE_TEXT)).personalizationTagName).toBe('unicode_cafe');
  });

  it('refuses bad fields with precise ids', async () => {
    const a = newAccount();
    await addField(c(), a, 'Plan', FT.FIELD_TYPE_SINGLE_CHOICE, { options: ['A'], personalizationTagName: 'plan' });
    const cases: Array<[Partial<subscriberV1.AddFieldRequest>, number, string]> = [
      [{ personalizationTagName: 'Plan' }, status.INVALID_ARGUMENT, 'invalid_personalization_tag_name'],
      [{ personalizationTagName: '1st' }, status.INVALID_ARGUMENT, 'invalid_personalization_tag_name'],
      [{ personalizationTagName: 'plan' }, status.ALREADY_EXISTS, 'personalization_tag_name_exists'],
      [{ personalizationTagName: 'email' }, status.ALREADY_EXISTS, 'personalization_tag_name_exists'],
      [{ label: ' ' }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ label: 'x'.repeat(256) }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fieldType: FT.FIELD_TYPE_UNSPECIFIED }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fieldType: 42 as subscriberV1.FieldType }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fieldType: FT.FIELD_TYPE_MULTI_CHOICE, options: [] }, status.INVALID_ARGUMENT, 'field_options_required'],
      [{ fieldType: FT.FIELD_TYPE_NUMBER, options: ['1'] }, status.INVALID_ARGUMENT, 'field_options_not_allowed'],
      [{ fieldType: FT.FIELD_TYPE_SINGLE_CHOICE, options: ['A', 'a'] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fieldType: FT.FIELD_TYPE_SINGLE_CHOICE, options: Array.from({ length: 501 }, (_, i) => `o${i}`) }, status.INVALID_ARGUMENT, 'validation_failed'],
    ];
    for (const [over, code, errorId] of cases) {
      expect(await errorOf(c().addField({ accountId: a, label: 'Field', fieldType: FT.FIELD_TYPE_TEXT, required: false, internal: false, options: [], ...over }))).toMatchObject({ code, errorId });
    }
    expect(await fieldsOf(a)).toHaveLength(3);
  });

  it('PATCH relabels, flips flags, moves (renumbering the others) and patches options; built-ins are immutable', async () => {
    const a = newAccount();
    const [f1, f2, f3] = [await addField(c(), a, 'A', FT.FIELD_TYPE_TEXT), await addField(c(), a, 'B', FT.FIELD_TYPE_TEXT), await addField(c(), a, 'C', FT.FIELD_TYPE_MULTI_CHOICE, { options: ['x', 'y'] })];
    const moved = (await c().updateField({ accountId: a, fieldId: fieldId(f3), position: 2, required: true, internal: true, label: ' C2 ', optionsGiven: false, options: [] })).field!;
    expect(moved).toMatchObject({ position: 2, required: true, internal: true, label: 'C2' });
    expect((await fieldsOf(a)).slice(2).map((f) => [fieldId(f), f.position])).toEqual([
      [fieldId(f3), 2],
      [fieldId(f1), 3],
      [fieldId(f2), 4],
    ]);
    const [x, y] = f3.options;
    const patched = (await c().updateField({
      accountId: a,
      fieldId: fieldId(f3),
      optionsGiven: true,
      options: [{ label: 'z', position: 0, active: true }, { id: x.id, label: 'X!', position: 0, active: true }],
    })).field!;
    expect(patched.options).toEqual([
      { id: expect.any(String), label: 'z', position: 1, active: true },
      { id: x.id, label: 'X!', position: 2, active: true },
      { id: y.id, label: 'y', position: 3, active: false },
    ]);
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f3), optionsGiven: true, options: [{ id: '00000000-0000-4000-8000-000000000000', label: 'q', position: 0, active: true }] }))).toMatchObject({
      code: status.NOT_FOUND,
      errorId: 'option_not_found',
    });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f3), optionsGiven: true, options: [] }))).toMatchObject({ errorId: 'field_options_required' });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f1), optionsGiven: true, options: [{ label: 'q', position: 0, active: true }] }))).toMatchObject({ errorId: 'field_options_not_allowed' });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f1), position: 1, optionsGiven: false, options: [] }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f1), position: 5, optionsGiven: false, options: [] }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: fieldId(f1), label: '', optionsGiven: false, options: [] }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(c().updateField({ accountId: a, fieldId: '00000000-0000-4000-8000-000000000000', optionsGiven: false, options: [] }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'field_not_found' });
    for (const ref of ['EMAIL', 'FIRST_NAME']) {
      expect(await errorOf(c().updateField({ accountId: a, fieldId: ref, label: 'x', optionsGiven: false, options: [] }))).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'built_in_field_immutable' });
      expect(await errorOf(c().archiveField({ accountId: a, fieldId: ref }))).toMatchObject({ errorId: 'built_in_field_immutable' });
      expect(await errorOf(c().deleteField({ accountId: a, fieldId: ref }))).toMatchObject({ errorId: 'built_in_field_immutable' });
    }
    // the catalog is unchanged by the refused patches
    expect((await c().getField({ accountId: a, fieldId: fieldId(f3) })).field).toEqual(patched);
  });

  it('usage report: value count (multi-option once per subscriber) and every source answered', async () => {
    const a = newAccount();
    const multi = await addField(c(), a, 'Interests', FT.FIELD_TYPE_MULTI_CHOICE, { options: ['a', 'b', 'c'] });
    const ids = multi.options.map((o) => o.id!);
    await add(c(), a, 'm1@example.org', { fields: [{ fieldId: fieldId(multi), value: { value: { $case: 'optionIds', value: { ids } }, labels: [] } }] });
    await add(c(), a, 'm2@example.org', { fields: [{ fieldId: fieldId(multi), value: { value: { $case: 'optionIds', value: { ids: [ids[0]] } }, labels: [] } }] });
    await add(c(), a, 'm3@example.org');
    const { report } = await c().getFieldUsage({ accountId: a, fieldId: fieldId(multi) });
    expect(report).toEqual({
      fieldId: fieldId(multi),
      fieldLabel: 'Interests',
      personalizationTagName: 'interests',
      fieldType: FT.FIELD_TYPE_MULTI_CHOICE,
      subscriberValueCount: '2',
      archiveBlocked: false,
      permanentDeleteBlocked: false,
      blockingUsages: [],
      warningUsages: [],
      contentMergeTagUsages: [],
      permanentDeleteBlockingUsages: [],
      externalHints: [],
      sources: ['segment', 'form', 'messaging', 'rss'].map((service) => ({ service, answered: true })),
    });
    expect((await c().listFieldForms({ accountId: a, fieldId: fieldId(multi) })).forms).toEqual([]);
  });

  it('archive -> no new values, stored values readable; restore; delete only archived fields, removing their values', async () => {
    const a = newAccount();
    const f = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT, { required: true });
    const keep = await addField(c(), a, 'Keep', FT.FIELD_TYPE_NUMBER);
    const s = await add(c(), a, 'arch@example.org', { fields: [{ fieldId: fieldId(f), value: text('ACME') }, { fieldId: fieldId(keep), value: num(1) }] });
    expect(await errorOf(c().deleteField({ accountId: a, fieldId: fieldId(f) }))).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'field_not_archived' });

    const archived = (await c().archiveField({ accountId: a, fieldId: fieldId(f) })).field!;
    expect(archived.active).toBe(false);
    expect((await c().archiveField({ accountId: a, fieldId: fieldId(f) })).field).toEqual(archived); // idempotent
    expect((await fieldsOf(a)).map(fieldId)).not.toContain(fieldId(f));
    expect((await fieldsOf(a, true)).map(fieldId)).toContain(fieldId(f));
    // no new values; the stored one stays readable; an archived required field is not required
    expect(await errorOf(c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f), value: text('Other') }))).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'field_archived' });
    const other = await add(c(), a, 'new@example.org');
    expect(await errorOf(c().setFieldValue({ accountId: a, subscriberId: other.id, fieldId: fieldId(f), value: text('ACME') }))).toMatchObject({ errorId: 'field_archived' });
    const d = await data(c(), a, s.id);
    expect(d.fields.find((x) => x.fieldId === fieldId(f))?.value).toEqual(text('ACME'));
    // a GET-then-PUT round trip re-sends the archived value unchanged: accepted
    await c().replaceSubscriberData({ accountId: a, subscriberId: s.id, email: d.email, subscriberStatus: d.subscriberStatus, fields: d.fields, tags: d.tags });

    const restored = (await c().restoreField({ accountId: a, fieldId: fieldId(f) })).field!;
    expect(restored).toMatchObject({ active: true, personalizationTagName: 'company', position: 2 });
    await c().archiveField({ accountId: a, fieldId: fieldId(f) });
    await c().deleteField({ accountId: a, fieldId: fieldId(f) });
    expect(await errorOf(c().getField({ accountId: a, fieldId: fieldId(f) }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'field_not_found' });
    expect((await data(c(), a, s.id)).fields.map((x) => x.fieldId)).toEqual([fieldId(keep)]);
    expect((await fieldsOf(a, true)).slice(2).map((x) => [fieldId(x), x.position])).toEqual([[fieldId(keep), 2]]);
    // the tag name is free again
    expect((await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT)).personalizationTagName).toBe('company');
    for (const call of [c().archiveField({ accountId: a, fieldId: fieldId(f) }), c().restoreField({ accountId: a, fieldId: fieldId(f) }), c().deleteField({ accountId: a, fieldId: fieldId(f) }), c().getFieldUsage({ accountId: a, fieldId: fieldId(f) })]) {
      expect(await errorOf(call)).toMatchObject({ errorId: 'field_not_found' });
    }
    // the catalog's events: one account-wide field.deleted tells projections to drop the values
    const events = await eventsOf(env.nc, a, (es) => es.filter((e) => e.type === 'field.created').length === 3);
    expect(events.filter((e) => e.type.startsWith('field.') && e.field.id === fieldId(f)).map((e) => e.type)).toEqual([
      'field.created',
      'field.archived',
      'field.restored',
      'field.archived',
      'field.deleted',
    ]);
    expect(events.find((e) => e.type === 'field.deleted')).toMatchObject({ removedFromSubscribers: 1, field: { id: fieldId(f), active: false } });
    expect(events.find((e) => e.type === 'field.updated' && e.field.id === fieldId(keep))?.field.position).toBe(2); // renumbered
  });

  it('a source that does not answer: the report says so, archive and permanent delete refuse with field_usage_unknown', async () => {
    const a = newAccount();
    const f = await addField(degradedClient, a, 'Company', FT.FIELD_TYPE_TEXT);
    const { report } = await degradedClient.getFieldUsage({ accountId: a, fieldId: fieldId(f) });
    expect(report?.sources).toEqual([
      { service: 'segment', answered: true },
      { service: 'form', answered: true },
      { service: 'messaging', answered: true },
      { service: 'rss', answered: false, error: 'the rss service is unavailable' }, // no address, no transport words
    ]);
    expect(report).toMatchObject({ archiveBlocked: true, permanentDeleteBlocked: true, blockingUsages: [] });
    const refused = await errorOf(degradedClient.archiveField({ accountId: a, fieldId: fieldId(f) }));
    expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'field_usage_unknown', details: [{ path: 'sources.rss', problem: expect.any(String) }] });
    expect((await degradedClient.getField({ accountId: a, fieldId: fieldId(f) })).field?.active).toBe(true);
    // the form service answers, so its forms are known
    expect((await degradedClient.listFieldForms({ accountId: a, fieldId: fieldId(f) })).forms).toEqual([]);
  });
});

describe('tags', () => {
  it('CRUD with names unique per account ignoring case, counts, and removal from subscribers on delete', async () => {
    const a = newAccount();
    const vip = await addTag(c(), a, ' VIP ');
    expect(vip).toMatchObject({ name: 'VIP', subscriberCount: '0' });
    expect(await errorOf(addTag(c(), a, 'vip'))).toMatchObject({ code: status.ALREADY_EXISTS, errorId: 'tag_name_exists' });
    expect(await errorOf(addTag(c(), a, ''))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed' });
    expect(await errorOf(addTag(c(), a, 'x'.repeat(101)))).toMatchObject({ errorId: 'validation_failed' });
    await expect(addTag(c(), newAccount(), 'VIP')).resolves.toBeDefined();
    const lead = await addTag(c(), a, 'Lead');
    const s = await add(c(), a, 't@example.org', { tags: [vip.id, lead.id] });
    expect((await c().getTag({ accountId: a, tagId: vip.id })).tag?.subscriberCount).toBe('1');
    expect((await c().listTags({ accountId: a })).items.map((t) => [t.name, t.subscriberCount])).toEqual([
      ['Lead', '1'],
      ['VIP', '1'],
    ]);
    expect((await c().renameTag({ accountId: a, tagId: vip.id, name: 'Very important' })).tag).toMatchObject({ id: vip.id, name: 'Very important', subscriberCount: '1' });
    expect((await c().renameTag({ accountId: a, tagId: vip.id, name: 'very IMPORTANT' })).tag?.name).toBe('very IMPORTANT'); // its own name in another case
    expect(await errorOf(c().renameTag({ accountId: a, tagId: vip.id, name: 'LEAD' }))).toMatchObject({ errorId: 'tag_name_exists' });
    await c().deleteTag({ accountId: a, tagId: vip.id });
    expect((await data(c(), a, s.id)).tags).toEqual([lead.id]);
    for (const call of [c().getTag({ accountId: a, tagId: vip.id }), c().deleteTag({ accountId: a, tagId: vip.id }), c().renameTag({ accountId: a, tagId: vip.id, name: 'x' })]) {
      expect(await errorOf(call)).toMatchObject({ code: status.NOT_FOUND, errorId: 'tag_not_found' });
    }
    expect(await errorOf(c().getTag({ accountId: a, tagId: 'vip' }))).toMatchObject({ errorId: 'invalid_uuid' });
  });
});

describe('topics', () => {
  it('every account has the default topic Newsletter; isDefault moves it; the default cannot be deactivated, un-defaulted or deleted', async () => {
    const a = newAccount();
    const [newsletter] = (await c().listTopics({ accountId: a })).items;
    expect(newsletter).toMatchObject({ label: 'Newsletter', active: true, isDefault: true, subscriberCount: '0' });
    const news = await addTopic(c(), a, ' News ', { description: ' Weekly ', isDefault: true });
    expect(news).toMatchObject({ label: 'News', description: 'Weekly', active: true, isDefault: true, subscriberCount: '0' });
    expect((await c().getTopic({ accountId: a, topicId: newsletter.id })).topic?.isDefault).toBe(false);
    const deals = await addTopic(c(), a, 'Deals');
    expect(deals.isDefault).toBe(false);
    expect(await errorOf(c().updateTopic({ accountId: a, topicId: news.id, active: false, descriptionGiven: false }))).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'topic_is_default' });
    expect(await errorOf(c().updateTopic({ accountId: a, topicId: news.id, isDefault: false, descriptionGiven: false }))).toMatchObject({ errorId: 'topic_is_default' });
    expect(await errorOf(c().deleteTopic({ accountId: a, topicId: news.id }))).toMatchObject({ code: status.FAILED_PRECONDITION, errorId: 'topic_is_default' });

    expect((await c().updateTopic({ accountId: a, topicId: deals.id, isDefault: true, label: 'Offers', descriptionGiven: false })).topic).toMatchObject({ isDefault: true, label: 'Offers' });
    expect((await c().listTopics({ accountId: a })).items.map((t) => [t.id, t.isDefault])).toEqual([
      [newsletter.id, false],
      [news.id, false],
      [deals.id, true],
    ]);
    const s = await add(c(), a, 'd@example.org');
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics.filter((t) => t.subscribed).map((t) => t.topicId)).toEqual([deals.id]);
    // description: given -> set, descriptionGiven without value -> cleared
    expect((await c().updateTopic({ accountId: a, topicId: news.id, descriptionGiven: true })).topic?.description).toBeUndefined();
    expect((await c().updateTopic({ accountId: a, topicId: news.id, active: false, descriptionGiven: false })).topic?.active).toBe(false);
    expect(await errorOf(c().updateTopic({ accountId: a, topicId: news.id, isDefault: true, descriptionGiven: false }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'topic_inactive' });
    expect(await errorOf(c().updateTopic({ accountId: a, topicId: news.id, label: ' ', descriptionGiven: false }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(addTopic(c(), a, 'x', { description: 'y'.repeat(2001) }))).toMatchObject({ errorId: 'validation_failed' });
    await c().deleteTopic({ accountId: a, topicId: news.id });
    await c().deleteTopic({ accountId: a, topicId: newsletter.id });
    // the last topic is the default: it stays
    expect(await errorOf(c().deleteTopic({ accountId: a, topicId: deals.id }))).toMatchObject({ errorId: 'topic_is_default' });
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics.map((t) => t.topicId)).toEqual([deals.id]);
    for (const call of [c().getTopic({ accountId: a, topicId: news.id }), c().deleteTopic({ accountId: a, topicId: news.id }), c().updateTopic({ accountId: a, topicId: news.id, descriptionGiven: false })]) {
      expect(await errorOf(call)).toMatchObject({ code: status.NOT_FOUND, errorId: 'topic_not_found' });
    }
    // a new topic does not take the flag
    expect((await addTopic(c(), a, 'Fresh')).isDefault).toBe(false);
  });

  it('enrollExistingSubscribers subscribes everyone; counts follow subscriptions', async () => {
    const a = newAccount();
    const s1 = await add(c(), a, 'e1@example.org');
    const s2 = await add(c(), a, 'e2@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
    const first = await addTopic(c(), a, 'First', { enrollExistingSubscribers: true });
    expect(first.subscriberCount).toBe('2');
    const quiet = await addTopic(c(), a, 'Quiet');
    expect(quiet.subscriberCount).toBe('0');
    for (const s of [s1, s2]) {
      // created without topicIds: they joined the account's default topic
      expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics.map((t) => [t.label, t.subscribed])).toEqual([
        ['Newsletter', true],
        ['First', true],
        ['Quiet', false],
      ]);
    }
    expect((await list(c(), a, { topicId: first.id })).totalItems).toBe('2');
  });

  it('opt-outs are kept with time and source; replacement respects them unless overrideOptOuts', async () => {
    const a = newAccount();
    const [news, deals, old] = [await addTopic(c(), a, 'News'), await addTopic(c(), a, 'Deals'), await addTopic(c(), a, 'Old')];
    await c().updateTopic({ accountId: a, topicId: old.id, active: false, descriptionGiven: false });
    const s = await add(c(), a, 'opt@example.org', { topicIds: [news.id, deals.id], topicIdsGiven: true });
    const before = Date.now();
    const opted = (await c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: news.id, source: 'preference-centre' })).topics;
    const entry = opted.find((t) => t.topicId === news.id)!;
    expect(entry).toMatchObject({ subscribed: false, optedOut: true, optOutSource: 'preference-centre' });
    expect(Date.parse(entry.optedOutAt!)).toBeGreaterThanOrEqual(before - 1000);
    const again = (await c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: news.id })).topics.find((t) => t.topicId === news.id);
    expect(again).toEqual(entry); // the first opt-out is kept
    expect((await c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: deals.id })).topics.find((t) => t.topicId === deals.id)?.optOutSource).toBe('api');

    // replacement: opted-out topics stay unsubscribed
    const replaced = (await c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [news.id], overrideOptOuts: false })).topics;
    expect(replaced.find((t) => t.topicId === news.id)).toMatchObject({ subscribed: false, optedOut: true });
    // with overrideOptOuts the opt-out is removed and the topic subscribed; others left out are unsubscribed
    const overridden = (await c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [news.id], overrideOptOuts: true })).topics;
    expect(overridden.map((t) => [t.label, t.subscribed, t.optedOut])).toEqual([
      ['Newsletter', false, false],
      ['News', true, false],
      ['Deals', false, true],
      ['Old', false, false],
    ]);
    expect((await c().getTopic({ accountId: a, topicId: news.id })).topic?.subscriberCount).toBe('1');

    // errors, and nothing changes
    const snapshot = (await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics;
    expect(await errorOf(c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [deals.id, old.id], overrideOptOuts: true }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'topic_inactive' });
    expect(await errorOf(c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [deals.id, '00000000-0000-4000-8000-000000000000'], overrideOptOuts: false }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'topic_not_found' });
    expect(await errorOf(c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [deals.id, deals.id], overrideOptOuts: false }))).toMatchObject({ errorId: 'duplicate_ids' });
    expect(await errorOf(c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ errorId: 'topic_not_found' });
    expect(await errorOf(c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: deals.id, source: '' }))).toMatchObject({ errorId: 'validation_failed' });
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics).toEqual(snapshot);

    // deleting a topic drops its subscriptions and opt-outs
    await c().deleteTopic({ accountId: a, topicId: deals.id });
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics.map((t) => t.label)).toEqual(['Newsletter', 'News', 'Old']);
  });
});

void opt;
