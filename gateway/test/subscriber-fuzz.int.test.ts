import { schemaErrors } from '../src/openapi/validator';
import { expectStatus, startSubscriberStack, UNKNOWN_ID, type Api, type SubscriberStack } from './support/subscriber-stack';
import type { ApiResponse } from './support/harness';

// Generated bad bodies for every writing route of the subscriber domain: a valid request with one
// known-bad change (wrong kinds, unknown ids, malformed UUIDs, huge strings, wrong types, duplicate
// ids, unknown properties, nulls where not allowed, missing members) or a bad path. Every answer is
// the status and errorId that change calls for (a sync answers 200 with every row FAILED with that
// errorId), and nothing may be partly written: the account reads exactly as before.

const SEED = Number(process.env.FUZZ_SEED ?? 20240611);
const CASES = Number(process.env.SUBSCRIBER_FUZZ_CASES ?? 400);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED + 3);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];

type Body = any; // eslint-disable-line @typescript-eslint/no-explicit-any
/** A change that makes a valid request bad, and the answer it gets: `status errorId` (a sync row: `FAILED errorId`). */
type Mutation = { name: string; want: string; apply(body: Body): void };

let env: SubscriberStack;
let acc: Api;
let ctx: Awaited<ReturnType<typeof seed>>;

async function seed(a: Api) {
  const field = async (body: Record<string, unknown>) => expectStatus(await a.post('/fields', body), 201);
  const text = await field({ label: 'Nickname', fieldType: 'TEXT' });
  const number = await field({ label: 'Age', fieldType: 'NUMBER' });
  const date = await field({ label: 'Birthday', fieldType: 'DATE' });
  const single = await field({ label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red', 'Green'] });
  const multi = await field({ label: 'Sports', fieldType: 'MULTI_CHOICE', options: ['Run', 'Swim'] });
  const email = await field({ label: 'Work email', fieldType: 'EMAIL' });
  const vip = expectStatus(await a.post('/tags', { name: 'VIP' }), 201);
  const beta = expectStatus(await a.post('/tags', { name: 'Beta' }), 201);
  const news = expectStatus(await a.post('/topics', { label: 'News', isDefault: true }), 201); // the account's default topic
  const deals = expectStatus(await a.post('/topics', { label: 'Deals' }), 201);
  const subscriber = expectStatus(
    await a.post('/subscribers', {
      email: 'seed@example.org',
      firstName: 'Seed',
      tags: [vip.id],
      fields: [{ fieldId: text.fieldId, value: { kind: 'TEXT', text: 'seed' } }, { fieldId: multi.fieldId, value: { kind: 'MULTI_OPTION', optionIds: [multi.options[0].id] } }],
    }),
    201,
  );
  expectStatus(await a.post('/subscribers', { email: 'other@example.org' }), 201);
  return { text, number, date, single, multi, email, vip, beta, news, deals, subscriber };
}

/** Everything the account holds, as it reads through the API. */
async function snapshot(a: Api) {
  const s = ctx.subscriber.id;
  const get = async (path: string) => {
    const res = await a.get(path);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    return res.json;
  };
  const list = await get('/subscribers?pageSize=1000');
  return {
    list,
    subscribers: await Promise.all(list.items.map((x: { id: string }) => get(`/subscribers/${x.id}/data`))),
    topicsOfSeed: await get(`/subscribers/${s}/topics`),
    valuesOfSeed: await get(`/subscribers/${s}/field-values`),
    fields: await get('/fields?includeArchived=true'),
    tags: await get('/tags'),
    topics: await get('/topics'),
  };
}

beforeAll(async () => {
  env = await startSubscriberStack();
  acc = await env.account('subscriber fuzz');
  ctx = await seed(acc);
}, 60_000);
afterAll(() => env?.stop());

// ---- mutations ---------------------------------------------------------------------------------
// Each mutation alone makes a valid request bad, and knows the answer: `status errorId` (for a sync,
// every row FAILED with that errorId).

const huge = (n: number) => 'ẞ'.repeat(n);
const WRONG_TYPES = [5, -1.5, true, {}, [], ['x'], { a: 1 }];
const MALFORMED_IDS = ['x', '', '3f0c2a5e2a7b4c479a431d8f3a0e6b21', '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b2', '../../etc', 'EMAIL', '00000000-0000-0000-0000-00000000000g'];
const INVALID = '400 validation_failed';
const UNKNOWN = '400 unknown_property';
const BAD_UUID = '400 invalid_uuid';
const BAD_EMAIL = '400 invalid_email';
const DUPLICATE = '400 duplicate_ids';

const set = (member: string, value: unknown, want: string, label = JSON.stringify(value)?.slice(0, 30)): Mutation => ({ name: `${member}=${label}`, want, apply: (b) => (b[member] = structuredClone(value)) });
/** The member as an array to append to. */
function list(b: Body, member: string): unknown[] {
  if (!Array.isArray(b[member])) b[member] = [];
  return b[member];
}
const remove = (member: string): Mutation => ({ name: `-${member}`, want: INVALID, apply: (b) => delete b[member] });
const unknownProperty: Mutation[] = ['accountId', 'id', 'colour', '__proto__x', 'subscriber_status', 'TAGS'].map((k) => set(k, pick([1, 'x', null, {}]), UNKNOWN, 'unknown'));

function stringMember(member: string, opts: { max: number; required?: boolean; nullable?: boolean; empty?: boolean }): Mutation[] {
  return [
    ...WRONG_TYPES.map((v) => set(member, v, INVALID)),
    ...(opts.nullable ? [] : [set(member, null, INVALID)]),
    set(member, huge(opts.max + 1), INVALID, `huge(${opts.max + 1})`),
    ...(opts.empty === false ? [] : [set(member, '', INVALID)]),
    ...(opts.required ? [remove(member)] : []),
  ];
}
const emailMember = (member: string, required = true): Mutation[] => [
  ...['not-an-email', '@example.org', 'a@', ' ', `${'a'.repeat(250)}@b.org`, 'a@b@c.org', 'a b@c.org'].map((v) => set(member, v, BAD_EMAIL)),
  ...WRONG_TYPES.map((v) => set(member, v, INVALID)),
  set(member, null, INVALID),
  ...(required ? [remove(member)] : []),
];
const boolMember = (member: string): Mutation[] => ['true', 1, 0, null, 'yes', []].map((v) => set(member, v, INVALID));

function idArray(member: string, opts: { known: () => string[]; unknown: string | null; max: number; required?: boolean }): Mutation[] {
  return [
    ...MALFORMED_IDS.map((bad) => ({ name: `${member}+malformed(${bad})`, want: BAD_UUID, apply: (b: Body) => (b[member] = [...opts.known(), bad]) })),
    { name: `${member} duplicate`, want: DUPLICATE, apply: (b) => (b[member] = [...opts.known(), ...opts.known().slice(0, 1)]) },
    { name: `${member} duplicate (case)`, want: DUPLICATE, apply: (b) => (b[member] = [...opts.known(), opts.known()[0].toUpperCase()]) },
    ...(opts.unknown ? [{ name: `${member}+unknown`, want: opts.unknown, apply: (b: Body) => (b[member] = [...opts.known(), UNKNOWN_ID]) }] : []),
    { name: `${member} too many`, want: INVALID, apply: (b) => (b[member] = Array.from({ length: opts.max + 1 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)) },
    ...['x', 5, null, {}, [5], [null], [{}]].map((v) => set(member, v, INVALID)),
    ...(opts.required ? [remove(member)] : []),
  ];
}

/** Bad field values: the value object itself (PUT field-values, FieldValueInput.value), on the field they are for. */
function badValues(): Array<{ name: string; want: string; value: () => unknown; fieldId?: () => string }> {
  const c = ctx;
  return [
    { name: 'kind mismatch', want: '400 field_value_kind_mismatch', value: () => ({ kind: 'TEXT', text: '41' }), fieldId: () => c.number.fieldId },
    { name: 'kind for another type', want: '400 field_value_kind_mismatch', value: () => ({ kind: 'SINGLE_OPTION', optionId: c.single.options[0].id }), fieldId: () => c.multi.fieldId },
    { name: 'LONG_TEXT kind', want: INVALID, value: () => ({ kind: 'LONG_TEXT', text: 'x' }) },
    { name: 'lowercase kind', want: INVALID, value: () => ({ kind: 'text', text: 'x' }) },
    { name: 'no kind', want: INVALID, value: () => ({ text: 'x' }) },
    { name: 'kind null', want: INVALID, value: () => ({ kind: null, text: 'x' }) },
    { name: 'payload of another kind', want: UNKNOWN, value: () => ({ kind: 'TEXT', number: 1 }) },
    { name: 'payload wrong type', want: INVALID, value: () => ({ kind: 'TEXT', text: pick([5, null, true, ['x'], {}]) }) },
    { name: 'TEXT over 10,000', want: INVALID, value: () => ({ kind: 'TEXT', text: huge(10_001) }) },
    { name: 'TEXT over 100,000', want: INVALID, value: () => ({ kind: 'TEXT', text: huge(100_001) }) },
    { name: 'labels in a request', want: UNKNOWN, value: () => ({ kind: 'SINGLE_OPTION', optionId: c.single.options[0].id, labels: ['Red'] }), fieldId: () => c.single.fieldId },
    { name: 'extra member', want: UNKNOWN, value: () => ({ kind: 'TEXT', text: 'x', extra: 1 }) },
    { name: 'bad number', want: INVALID, value: () => ({ kind: 'NUMBER', number: pick(['1', null, {}, '1e309']) }), fieldId: () => c.number.fieldId },
    { name: 'bad date', want: INVALID, value: () => ({ kind: 'DATE', date: pick(['2023-02-29', '2024-13-01', '24-01-01', '2024-01-01T00:00:00Z', 20240101, '']) }), fieldId: () => c.date.fieldId },
    { name: 'bad email value', want: BAD_EMAIL, value: () => ({ kind: 'EMAIL', text: pick(['nope', '', 'a@', huge(300)]) }), fieldId: () => c.email.fieldId },
    { name: 'unknown option', want: '404 option_not_found', value: () => ({ kind: 'SINGLE_OPTION', optionId: UNKNOWN_ID }), fieldId: () => c.single.fieldId },
    { name: 'option of another field', want: '404 option_not_found', value: () => ({ kind: 'MULTI_OPTION', optionIds: [c.single.options[0].id] }), fieldId: () => c.multi.fieldId },
    { name: 'malformed option', want: BAD_UUID, value: () => ({ kind: 'SINGLE_OPTION', optionId: pick(MALFORMED_IDS) }), fieldId: () => c.single.fieldId },
    { name: 'duplicate options', want: DUPLICATE, value: () => ({ kind: 'MULTI_OPTION', optionIds: [c.multi.options[0].id, c.multi.options[0].id] }), fieldId: () => c.multi.fieldId },
    { name: 'empty multi', want: INVALID, value: () => ({ kind: 'MULTI_OPTION', optionIds: [] }), fieldId: () => c.multi.fieldId },
    { name: 'null value', want: INVALID, value: () => null },
    { name: 'array value', want: INVALID, value: () => [{ kind: 'TEXT', text: 'x' }] },
  ];
}

function valuesMember(member: string, required: boolean): Mutation[] {
  const entry = (fieldId: string, value: unknown) => ({ fieldId, value });
  return [
    ...badValues().map((v) => ({ name: `${member}: ${v.name}`, want: v.want, apply: (b: Body) => (b[member] = [entry(v.fieldId?.() ?? ctx.text.fieldId, v.value())]) })),
    { name: `${member}: unknown field`, want: '404 field_not_found', apply: (b) => (b[member] = [entry(UNKNOWN_ID, { kind: 'TEXT', text: 'x' })]) },
    { name: `${member}: malformed field id`, want: BAD_UUID, apply: (b) => (b[member] = [entry(pick(MALFORMED_IDS), { kind: 'TEXT', text: 'x' })]) },
    { name: `${member}: same field twice`, want: DUPLICATE, apply: (b) => (b[member] = [entry(ctx.number.fieldId, { kind: 'NUMBER', number: 1 }), entry(ctx.number.fieldId, { kind: 'NUMBER', number: 2 })]) },
    { name: `${member}: no value`, want: INVALID, apply: (b) => (b[member] = [{ fieldId: ctx.text.fieldId }]) },
    { name: `${member}: extra member`, want: UNKNOWN, apply: (b) => (b[member] = [{ ...entry(ctx.text.fieldId, { kind: 'TEXT', text: 'x' }), label: 'x' }]) },
    { name: `${member}: null entry`, want: INVALID, apply: (b) => (b[member] = [null]) },
    ...['x', 5, null, {}].map((v) => set(member, v, INVALID)),
    ...(required ? [remove(member)] : []),
  ];
}

/** `manualOnly`: the statuses only the system sets are refused as such (PUT); else they are not in the schema's enum. */
const statusMember = (member: string, manualOnly: boolean, required: boolean): Mutation[] => [
  ...['active', 'GONE', '', 'ACTIVE ', 5, null, true].map((v) => set(member, v, INVALID)),
  ...(manualOnly ? ['UNCONFIRMED', 'BOUNCED', 'COMPLAINED'].map((v) => set(member, v, '400 subscriber_status_not_manual')) : ['BOUNCED', 'COMPLAINED'].map((v) => set(member, v, INVALID))),
  ...(required ? [remove(member)] : []),
];

// ---- routes -------------------------------------------------------------------------------------

interface Route {
  method: 'POST' | 'PUT' | 'PATCH';
  path(): string;
  /** Paths with ids: bad variants (malformed or unknown ids), each with its answer. */
  badPaths?: () => Array<[string, string]>;
  base(): Body;
  mutations(): Mutation[];
  /** Sync answers 200 with FAILED rows for bad rows. */
  rows?: boolean;
}

const sid = () => ctx.subscriber.id;
/** Malformed ids that stay one path segment (a client resolves `..` before sending). */
const MALFORMED_SEGMENTS = MALFORMED_IDS.filter((id) => id && !id.includes('/'));
const subscriberPaths = (suffix: string) => (): Array<[string, string]> => [[`/subscribers/${UNKNOWN_ID}${suffix}`, '404 subscriber_not_found'], [`/subscribers/${pick(MALFORMED_SEGMENTS)}${suffix}`, BAD_UUID]];
const tagIds = () => [ctx.vip.id];
const topicIds = () => [ctx.news.id];

const addSubscriberMutations = (): Mutation[] => [
  ...emailMember('email'),
  ...stringMember('firstName', { max: 255, nullable: true }).filter((m) => m.name !== 'firstName=""'),
  ...statusMember('subscriberStatus', false, false),
  ...valuesMember('fields', false),
  ...idArray('tags', { known: tagIds, unknown: '404 tag_not_found', max: 1000 }),
  ...idArray('topicIds', { known: topicIds, unknown: '404 topic_not_found', max: 1000 }),
  ...unknownProperty,
  { name: 'existing email', want: '409 subscriber_email_exists', apply: (b) => (b.email = 'SEED@example.org') },
];
const validAdd = () => ({ email: `fuzz${int(1e9)}@example.org`, firstName: 'Fuzz', subscriberStatus: 'ACTIVE', fields: [{ fieldId: ctx.number.fieldId, value: { kind: 'NUMBER', number: 3 } }], tags: tagIds(), topicIds: topicIds() });
/** The answer of a body-level refusal ('400 x') as the outcome of each sync row ('FAILED x'). */
const asRow = (m: Mutation): Mutation => ({ ...m, name: `rows: ${m.name}`, want: `FAILED ${m.want.split(' ')[1]}`, apply: (b: Body) => b.subscribers.forEach((row: Body) => m.apply(row)) });

const ROUTES: Route[] = [
  { method: 'POST', path: () => '/subscribers', base: validAdd, mutations: addSubscriberMutations },
  {
    method: 'POST',
    path: () => '/subscribers/sync',
    rows: true,
    // (UPDATE_ONLY would answer subscriber_not_found for the new rows before anything else)
    base: () => ({ subscribers: [validAdd(), validAdd()], mode: pick(['UPSERT', 'CREATE_ONLY']) }),
    mutations: () => [
      // every row gets the same bad change, so every row must fail with it
      // (an existing email is a valid update in a sync, so that one is left out)
      ...addSubscriberMutations().filter((m) => m.name !== 'existing email').map(asRow),
      { name: 'rows: not objects', want: 'FAILED validation_failed', apply: (b) => (b.subscribers = [null, 5, 'x', []]) },
      { name: 'no rows', want: INVALID, apply: (b) => (b.subscribers = []) },
      { name: 'too many rows', want: '400 sync_too_many_rows', apply: (b) => (b.subscribers = Array.from({ length: 1001 }, (_, i) => ({ email: `many${i}@example.org` }))) },
      ...['MERGE', 'upsert', null, 5].map((v) => set('mode', v, INVALID)),
      set('subscribers', { email: 'a@b.org' }, INVALID, 'object'),
      remove('subscribers'),
      ...unknownProperty,
    ],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/data`,
    badPaths: subscriberPaths('/data'),
    base: () => ({ email: 'replaced@example.org', firstName: 'Replaced', subscriberStatus: 'UNSUBSCRIBED', fields: [{ fieldId: ctx.date.fieldId, value: { kind: 'DATE', date: '2000-01-01' } }], tags: [ctx.beta.id] }),
    mutations: () => [
      ...emailMember('email'),
      { name: 'email of another subscriber', want: '409 subscriber_email_exists', apply: (b) => (b.email = 'other@example.org') },
      ...stringMember('firstName', { max: 255, nullable: true, required: true }).filter((m) => m.name !== 'firstName=""'),
      ...statusMember('subscriberStatus', true, true),
      ...valuesMember('fields', true),
      ...idArray('tags', { known: () => [ctx.beta.id], unknown: '404 tag_not_found', max: 1000, required: true }),
      ...unknownProperty,
      set('topicIds', [], UNKNOWN, 'topicIds'),
    ],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/email`,
    badPaths: subscriberPaths('/email'),
    base: () => ({ email: 'moved@example.org' }),
    mutations: () => [...emailMember('email'), { name: 'taken', want: '409 subscriber_email_exists', apply: (b) => (b.email = 'Other@example.org') }, ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/first-name`,
    badPaths: subscriberPaths('/first-name'),
    base: () => ({ firstName: 'Renamed' }),
    mutations: () => [...stringMember('firstName', { max: 255, nullable: true, required: true }).filter((m) => m.name !== 'firstName=""'), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/status`,
    badPaths: subscriberPaths('/status'),
    base: () => ({ subscriberStatus: 'BLOCKED' }),
    mutations: () => [...statusMember('subscriberStatus', true, true), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/topics`,
    badPaths: subscriberPaths('/topics'),
    base: () => ({ topicIds: [ctx.deals.id], overrideOptOuts: true }),
    mutations: () => [...idArray('topicIds', { known: () => [ctx.deals.id], unknown: '404 topic_not_found', max: 1000, required: true }), ...boolMember('overrideOptOuts'), ...unknownProperty],
  },
  {
    method: 'POST',
    path: () => `/subscribers/${sid()}/topics/${ctx.deals.id}/opt-out`,
    badPaths: () => [[`/subscribers/${sid()}/topics/${UNKNOWN_ID}/opt-out`, '404 topic_not_found'], [`/subscribers/${UNKNOWN_ID}/topics/${ctx.deals.id}/opt-out`, '404 subscriber_not_found'], [`/subscribers/${sid()}/topics/x/opt-out`, BAD_UUID]],
    base: () => ({ source: 'preference centre' }),
    mutations: () => [...stringMember('source', { max: 100 }), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/field-values/${ctx.text.fieldId}`,
    badPaths: () => [[`/subscribers/${sid()}/field-values/${UNKNOWN_ID}`, '404 field_not_found'], [`/subscribers/${UNKNOWN_ID}/field-values/${ctx.text.fieldId}`, '404 subscriber_not_found'], [`/subscribers/${sid()}/field-values/EMAIL`, BAD_UUID]],
    base: () => ({ kind: 'TEXT', text: 'changed' }),
    mutations: () =>
      badValues().map((v) => ({
        name: `value: ${v.name}`,
        want: v.want,
        apply: (b: Body) => {
          for (const k of Object.keys(b)) delete b[k];
          const value = v.value();
          if (v.fieldId && v.fieldId() !== ctx.text.fieldId) Object.assign(b, { __path: `/subscribers/${sid()}/field-values/${v.fieldId()}` });
          if (value === null || Array.isArray(value)) Object.assign(b, { __raw: value });
          else Object.assign(b, value);
        },
      })),
  },
  ...(['add', 'remove'] as const).map(
    (op): Route => ({
      method: 'POST',
      path: () => `/subscribers/tags/${op}`,
      base: () => ({ subscriberIds: [sid()], tagIds: [ctx.beta.id] }),
      mutations: () => [
        // an unknown subscriber id is skipped (NOT_FOUND), not an error: only malformed ones are bad here
        ...idArray('subscriberIds', { known: () => [sid()], unknown: null, max: 10_000, required: true }),
        set('subscriberIds', [], INVALID),
        ...idArray('tagIds', { known: () => [ctx.beta.id], unknown: '404 tag_not_found', max: 1000, required: true }),
        set('tagIds', [], INVALID),
        ...unknownProperty,
      ],
    }),
  ),
  {
    method: 'POST',
    path: () => '/fields',
    base: () => ({ label: 'Fuzzed', fieldType: 'SINGLE_CHOICE', options: ['a', 'b'], required: false, internal: false }),
    mutations: () => [
      ...stringMember('label', { max: 255, required: true }),
      set('label', '   ', INVALID),
      ...['CHOICE', 'text', '', null, 5].map((v) => set('fieldType', v, INVALID)),
      remove('fieldType'),
      { name: 'options on TEXT', want: '400 field_options_not_allowed', apply: (b) => (b.fieldType = 'TEXT') },
      { name: 'no options on choice', want: '400 field_options_required', apply: (b) => delete b.options },
      set('options', [], '400 field_options_required'),
      set('options', ['a', 'A'], INVALID, 'duplicate labels'),
      set('options', ['a', ''], INVALID, 'empty label'),
      set('options', [huge(256)], INVALID, 'huge label'),
      set('options', Array.from({ length: 501 }, (_, i) => `o${i}`), INVALID, '501 options'),
      ...['x', 5, null, [5], [null]].map((v) => set('options', v, INVALID)),
      ...['Colour', '1x', '_x', 'a-b', huge(65)].map((v) => set('personalizationTagName', v, '400 invalid_personalization_tag_name')),
      ...[5, null].map((v) => set('personalizationTagName', v, INVALID)),
      ...['email', 'first_name', 'nickname'].map((v) => set('personalizationTagName', v, '409 personalization_tag_name_exists', `taken ${v}`)),
      ...boolMember('required'),
      ...boolMember('internal'),
      ...unknownProperty,
      set('active', false, UNKNOWN),
      set('position', 3, UNKNOWN),
    ],
  },
  {
    method: 'PATCH',
    path: () => `/fields/${ctx.single.fieldId}`,
    badPaths: () => [[`/fields/${UNKNOWN_ID}`, '404 field_not_found'], ['/fields/x', BAD_UUID], ['/fields/EMAIL', '409 built_in_field_immutable'], ['/fields/FIRST_NAME', '409 built_in_field_immutable']],
    base: () => ({ label: 'Colour!', options: ctx.single.options.map((o: { id: string; label: string }) => ({ id: o.id, label: o.label })) }),
    mutations: () => [
      ...stringMember('label', { max: 255 }),
      ...boolMember('required'),
      ...boolMember('internal'),
      ...[-1, 0, 1, 1.5, 999, '2', null].map((v) => set('position', v, INVALID)),
      set('options', [], '400 field_options_required'),
      { name: 'unknown option id', want: '404 option_not_found', apply: (b) => list(b, 'options').push({ id: UNKNOWN_ID, label: 'New' }) },
      { name: 'option of another field', want: '404 option_not_found', apply: (b) => list(b, 'options').push({ id: ctx.multi.options[0].id, label: 'New' }) },
      { name: 'malformed option id', want: BAD_UUID, apply: (b) => list(b, 'options').push({ id: pick(MALFORMED_IDS.filter(Boolean)), label: 'New' }) },
      { name: 'duplicate option id', want: DUPLICATE, apply: (b) => list(b, 'options').push({ id: ctx.single.options[0].id, label: 'Other' }, { id: ctx.single.options[0].id, label: 'Another' }) },
      { name: 'duplicate option label', want: INVALID, apply: (b) => list(b, 'options').push({ id: null, label: 'x' }, { id: null, label: 'X' }) },
      { name: 'option without label', want: INVALID, apply: (b) => list(b, 'options').push({ id: null }) },
      { name: 'option huge label', want: INVALID, apply: (b) => list(b, 'options').push({ id: null, label: huge(256) }) },
      { name: 'option extra member', want: UNKNOWN, apply: (b) => list(b, 'options').push({ id: null, label: 'x', colour: 'red' }) },
      { name: 'option null', want: INVALID, apply: (b) => list(b, 'options').push(null) },
      ...['x', 5, null, {}].map((v) => set('options', v, INVALID)),
      ...['fieldType', 'personalizationTagName', 'active', 'type', 'fieldId'].map((k) => set(k, 'x', UNKNOWN, `immutable ${k}`)),
      ...unknownProperty,
    ],
  },
  {
    method: 'POST',
    path: () => '/tags',
    base: () => ({ name: `tag ${int(1e9)}` }),
    mutations: () => [...stringMember('name', { max: 100, required: true }), set('name', '  ', INVALID), set('name', 'vip', '409 tag_name_exists', 'existing'), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/tags/${ctx.beta.id}`,
    badPaths: () => [[`/tags/${UNKNOWN_ID}`, '404 tag_not_found'], ['/tags/x', BAD_UUID]],
    base: () => ({ name: 'Gamma' }),
    mutations: () => [...stringMember('name', { max: 100, required: true }), set('name', 'VIP', '409 tag_name_exists', 'existing'), ...unknownProperty],
  },
  {
    method: 'POST',
    path: () => '/topics',
    base: () => ({ label: 'Fuzz topic', description: 'about', enrollExistingSubscribers: true }),
    mutations: () => [
      ...stringMember('label', { max: 255, required: true }),
      ...stringMember('description', { max: 2000, nullable: true, empty: false }),
      ...boolMember('enrollExistingSubscribers'),
      ...boolMember('isDefault'),
      ...['active', 'id'].map((k) => set(k, true, UNKNOWN, `unknown ${k}`)),
      ...unknownProperty,
    ],
  },
  {
    method: 'PATCH',
    path: () => `/topics/${ctx.news.id}`,
    badPaths: () => [[`/topics/${UNKNOWN_ID}`, '404 topic_not_found'], ['/topics/x', BAD_UUID]],
    base: () => ({ label: 'News!', description: 'changed' }),
    mutations: () => [
      ...stringMember('label', { max: 255 }),
      ...stringMember('description', { max: 2000, nullable: true, empty: false }),
      ...boolMember('active'),
      ...boolMember('isDefault'),
      set('active', false, '409 topic_is_default', 'deactivate the default'),
      set('isDefault', false, '409 topic_is_default', 'un-default the default'),
      ...unknownProperty,
    ],
  },
];

/** One bad request: a valid body with one mutation, or a bad path with the valid body. */
function generate(): { route: Route; method: string; path: string; body: unknown; label: string; want: string } {
  const route = pick(ROUTES);
  const body = route.base();
  if (route.badPaths && random() < 0.15) {
    const [path, want] = pick(route.badPaths());
    return { route, method: route.method, path, body, want, label: `${route.method} ${path.replace(/[0-9a-f-]{36}/g, '<id>')} [bad path]` };
  }
  const m = pick(route.mutations());
  m.apply(body);
  let path = route.path();
  if (body && typeof body === 'object' && '__path' in body) {
    path = body.__path;
    delete body.__path;
  }
  const sent = body && typeof body === 'object' && '__raw' in body ? body.__raw : body;
  return { route, method: route.method, path, body: sent, want: m.want, label: `${route.method} ${path.replace(/[0-9a-f-]{36}/g, '<id>')} [${m.name}]` };
}

it(`${CASES} generated bad requests, each answered with its status and errorId (a sync: every row FAILED with it), nothing partly written (seed ${SEED})`, async () => {
  const before = await snapshot(acc);
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < CASES; i++) {
    const { method, path, body, label, want } = generate();
    const res: ApiResponse =
      method === 'POST' ? await acc.post(path, body) : method === 'PUT' ? await acc.put(path, body) : await acc.patch(path, body);
    const rows: Array<{ outcome: string; errorId?: string }> | undefined = res.status === 200 ? res.json?.results : undefined;
    const got = rows ? [...new Set(rows.map((r) => `${r.outcome} ${r.errorId}`))].join(', ') : `${res.status} ${res.json?.errorId}`;
    seen.set(want, (seen.get(want) ?? 0) + 1);
    if (got !== want) failures.push(`#${i} ${label}: ${got} (expected ${want}) ${res.text.slice(0, 200)}`);
    else if (rows && schemaErrors('SyncSubscribersResponse', res.json).length) failures.push(`#${i} ${label}: sync response does not match its schema`);
    else if (!rows && schemaErrors('ErrorMessageDto', res.json).length) failures.push(`#${i} ${label}: not an ErrorMessageDto: ${res.text.slice(0, 200)}`);
  }
  if (process.env.FUZZ_VERBOSE) console.log([...seen].sort((x, y) => y[1] - x[1]));
  expect(failures).toEqual([]);
  // every kind of refusal was exercised
  expect([...new Set([...seen.keys()].map((w) => w.split(' ')[0]))].sort()).toEqual(['400', '404', '409', 'FAILED']);
  expect(await snapshot(acc)).toEqual(before);
}, 300_000);
