import { schemaErrors } from '../src/openapi/validator';
import { expectStatus, startSubscriberStack, UNKNOWN_ID, type Api, type SubscriberStack } from './support/subscriber-stack';
import type { ApiResponse } from './support/harness';

// Generated bad bodies for every writing route of the subscriber domain: a valid request with one
// to three known-bad changes (wrong kinds, unknown ids, malformed UUIDs, huge strings, wrong
// types, duplicate ids, unknown properties, nulls where not allowed, missing members). Every
// answer must be a 4xx ErrorMessageDto (a sync may answer 200 with every row FAILED), never a
// 5xx, and nothing may be partly written: the account reads exactly as before.

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
type Mutation = { name: string; apply(body: Body): void };

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
  const news = expectStatus(await a.post('/topics', { label: 'News' }), 201);
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

const huge = (n: number) => 'ẞ'.repeat(n);
const WRONG_TYPES = [5, -1.5, true, {}, [], ['x'], { a: 1 }];
const MALFORMED_IDS = ['x', '', '3f0c2a5e2a7b4c479a431d8f3a0e6b21', '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b2', '../../etc', 'EMAIL', '00000000-0000-0000-0000-00000000000g'];

const set = (member: string, value: unknown, label = JSON.stringify(value)?.slice(0, 30)): Mutation => ({ name: `${member}=${label}`, apply: (b) => (b[member] = structuredClone(value)) });
/** The member as an array to append to (an earlier mutation may have replaced it with something else). */
function list(b: Body, member: string): unknown[] {
  if (!Array.isArray(b[member])) b[member] = [];
  return b[member];
}
const remove = (member: string): Mutation => ({ name: `-${member}`, apply: (b) => delete b[member] });
const unknownProperty: Mutation[] = ['accountId', 'id', 'colour', '__proto__x', 'subscriber_status', 'TAGS'].map((k) => set(k, pick([1, 'x', null, {}]), 'unknown'));

function stringMember(member: string, opts: { max: number; required?: boolean; nullable?: boolean; empty?: boolean }): Mutation[] {
  return [
    ...WRONG_TYPES.map((v) => set(member, v)),
    ...(opts.nullable ? [] : [set(member, null)]),
    set(member, huge(opts.max + 1), `huge(${opts.max + 1})`),
    ...(opts.empty === false ? [] : [set(member, '')]),
    ...(opts.required ? [remove(member)] : []),
  ];
}
const emailMember = (member: string, required = true): Mutation[] => [
  ...['not-an-email', '@example.org', 'a@', ' ', `${'a'.repeat(250)}@b.org`, 'a@b@c.org', 'a b@c.org'].map((v) => set(member, v)),
  ...WRONG_TYPES.map((v) => set(member, v)),
  set(member, null),
  ...(required ? [remove(member)] : []),
];
const boolMember = (member: string): Mutation[] => ['true', 1, 0, null, 'yes', []].map((v) => set(member, v));

function idArray(member: string, opts: { known: () => string[]; unknownIsError: boolean; max: number; required?: boolean }): Mutation[] {
  return [
    ...MALFORMED_IDS.map((bad) => ({ name: `${member}+malformed(${bad})`, apply: (b: Body) => (b[member] = [...opts.known(), bad]) })),
    { name: `${member} duplicate`, apply: (b) => (b[member] = [...opts.known(), ...opts.known().slice(0, 1)]) },
    { name: `${member} duplicate (case)`, apply: (b) => (b[member] = [...opts.known(), opts.known()[0].toUpperCase()]) },
    ...(opts.unknownIsError ? [{ name: `${member}+unknown`, apply: (b: Body) => (b[member] = [...opts.known(), UNKNOWN_ID]) }] : []),
    { name: `${member} too many`, apply: (b) => (b[member] = Array.from({ length: opts.max + 1 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)) },
    ...['x', 5, null, {}, [5], [null], [{}]].map((v) => set(member, v)),
    ...(opts.required ? [remove(member)] : []),
  ];
}

/** Bad field values: the value object itself (PUT field-values, FieldValueInput.value). */
function badValues(): Array<{ name: string; value: () => unknown; fieldId?: () => string }> {
  const c = ctx;
  return [
    { name: 'kind mismatch', value: () => ({ kind: 'TEXT', text: '41' }), fieldId: () => c.number.fieldId },
    { name: 'kind for another type', value: () => ({ kind: 'SINGLE_OPTION', optionId: c.single.options[0].id }), fieldId: () => c.multi.fieldId },
    { name: 'LONG_TEXT kind', value: () => ({ kind: 'LONG_TEXT', text: 'x' }) },
    { name: 'lowercase kind', value: () => ({ kind: 'text', text: 'x' }) },
    { name: 'no kind', value: () => ({ text: 'x' }) },
    { name: 'kind null', value: () => ({ kind: null, text: 'x' }) },
    { name: 'payload of another kind', value: () => ({ kind: 'TEXT', number: 1 }) },
    { name: 'payload wrong type', value: () => ({ kind: 'TEXT', text: pick([5, null, true, ['x'], {}]) }) },
    { name: 'TEXT over 10,000', value: () => ({ kind: 'TEXT', text: huge(10_001) }) },
    { name: 'TEXT over 100,000', value: () => ({ kind: 'TEXT', text: huge(100_001) }) },
    { name: 'labels in a request', value: () => ({ kind: 'SINGLE_OPTION', optionId: c.single.options[0].id, labels: ['Red'] }), fieldId: () => c.single.fieldId },
    { name: 'extra member', value: () => ({ kind: 'TEXT', text: 'x', extra: 1 }) },
    { name: 'bad number', value: () => ({ kind: 'NUMBER', number: pick(['1', null, {}, '1e309']) }), fieldId: () => c.number.fieldId },
    { name: 'bad date', value: () => ({ kind: 'DATE', date: pick(['2023-02-29', '2024-13-01', '24-01-01', '2024-01-01T00:00:00Z', 20240101, '']) }), fieldId: () => c.date.fieldId },
    { name: 'bad email value', value: () => ({ kind: 'EMAIL', text: pick(['nope', '', 'a@', huge(300)]) }), fieldId: () => c.email.fieldId },
    { name: 'unknown option', value: () => ({ kind: 'SINGLE_OPTION', optionId: UNKNOWN_ID }), fieldId: () => c.single.fieldId },
    { name: 'option of another field', value: () => ({ kind: 'MULTI_OPTION', optionIds: [c.single.options[0].id] }), fieldId: () => c.multi.fieldId },
    { name: 'malformed option', value: () => ({ kind: 'SINGLE_OPTION', optionId: pick(MALFORMED_IDS) }), fieldId: () => c.single.fieldId },
    { name: 'duplicate options', value: () => ({ kind: 'MULTI_OPTION', optionIds: [c.multi.options[0].id, c.multi.options[0].id] }), fieldId: () => c.multi.fieldId },
    { name: 'empty multi', value: () => ({ kind: 'MULTI_OPTION', optionIds: [] }), fieldId: () => c.multi.fieldId },
    { name: 'null value', value: () => null },
    { name: 'array value', value: () => [{ kind: 'TEXT', text: 'x' }] },
  ];
}

function valuesMember(member: string, required: boolean): Mutation[] {
  const entry = (fieldId: string, value: unknown) => ({ fieldId, value });
  return [
    ...badValues().map((v) => ({ name: `${member}: ${v.name}`, apply: (b: Body) => list(b, member).push(entry(v.fieldId?.() ?? ctx.text.fieldId, v.value())) })),
    { name: `${member}: unknown field`, apply: (b) => (b[member] = [entry(UNKNOWN_ID, { kind: 'TEXT', text: 'x' })]) },
    { name: `${member}: malformed field id`, apply: (b) => (b[member] = [entry(pick(MALFORMED_IDS), { kind: 'TEXT', text: 'x' })]) },
    { name: `${member}: same field twice`, apply: (b) => (b[member] = [entry(ctx.number.fieldId, { kind: 'NUMBER', number: 1 }), entry(ctx.number.fieldId, { kind: 'NUMBER', number: 2 })]) },
    { name: `${member}: no value`, apply: (b) => (b[member] = [{ fieldId: ctx.text.fieldId }]) },
    { name: `${member}: extra member`, apply: (b) => (b[member] = [{ ...entry(ctx.text.fieldId, { kind: 'TEXT', text: 'x' }), label: 'x' }]) },
    { name: `${member}: null entry`, apply: (b) => (b[member] = [null]) },
    ...['x', 5, null, {}].map((v) => set(member, v)),
    ...(required ? [remove(member)] : []),
  ];
}

const statusMember = (member: string, manualOnly: boolean, required: boolean): Mutation[] => [
  ...['active', 'GONE', '', 'ACTIVE ', 5, null, true].map((v) => set(member, v)),
  ...(manualOnly ? ['UNCONFIRMED', 'BOUNCED', 'COMPLAINED'] : ['BOUNCED', 'COMPLAINED']).map((v) => set(member, v)),
  ...(required ? [remove(member)] : []),
];

// ---- routes -------------------------------------------------------------------------------------

interface Route {
  method: 'POST' | 'PUT' | 'PATCH';
  path(): string;
  /** Paths with ids: bad variants (malformed or unknown ids). */
  badPaths?: () => string[];
  base(): Body;
  mutations(): Mutation[];
  /** Sync answers 200 with FAILED rows for bad rows. */
  rows?: boolean;
}

const sid = () => ctx.subscriber.id;
const subscriberPaths = (suffix: string) => () => [`/subscribers/${UNKNOWN_ID}${suffix}`, `/subscribers/${pick(MALFORMED_IDS.filter(Boolean))}${suffix}`];
const tagIds = () => [ctx.vip.id];
const topicIds = () => [ctx.news.id];

const addSubscriberMutations = (): Mutation[] => [
  ...emailMember('email'),
  ...stringMember('firstName', { max: 255, nullable: true }).filter((m) => m.name !== 'firstName=""'),
  ...statusMember('subscriberStatus', false, false),
  ...valuesMember('fields', false),
  ...idArray('tags', { known: tagIds, unknownIsError: true, max: 1000 }),
  ...idArray('topicIds', { known: topicIds, unknownIsError: true, max: 1000 }),
  ...unknownProperty,
  { name: 'existing email', apply: (b) => (b.email = 'SEED@example.org') },
];
const validAdd = () => ({ email: `fuzz${int(1e9)}@example.org`, firstName: 'Fuzz', subscriberStatus: 'ACTIVE', fields: [{ fieldId: ctx.number.fieldId, value: { kind: 'NUMBER', number: 3 } }], tags: tagIds(), topicIds: topicIds() });

const ROUTES: Route[] = [
  { method: 'POST', path: () => '/subscribers', base: validAdd, mutations: addSubscriberMutations },
  {
    method: 'POST',
    path: () => '/subscribers/sync',
    rows: true,
    base: () => ({ subscribers: [validAdd(), validAdd()], mode: pick(['UPSERT', 'CREATE_ONLY', 'UPDATE_ONLY']) }),
    mutations: () => [
      // every row gets a bad change, so every row must fail
      // (an existing email is a valid update in a sync, so that one is left out)
      ...addSubscriberMutations()
        .filter((m) => m.name !== 'existing email')
        .map((m) => ({ name: `rows: ${m.name}`, apply: (b: Body) => b.subscribers.forEach((row: Body) => m.apply(row)) })),
      { name: 'rows: not objects', apply: (b) => (b.subscribers = [null, 5, 'x', []]) },
      { name: 'rows: duplicate email', apply: (b) => (b.subscribers = [{ ...b.subscribers[0], tags: [UNKNOWN_ID] }, { ...b.subscribers[0], email: b.subscribers[0].email.toUpperCase(), topicIds: ['x'] }]) },
      { name: 'no rows', apply: (b) => (b.subscribers = []) },
      { name: 'too many rows', apply: (b) => (b.subscribers = Array.from({ length: 1001 }, (_, i) => ({ email: `many${i}@example.org` }))) },
      ...['MERGE', 'upsert', null, 5].map((v) => set('mode', v)),
      set('subscribers', { email: 'a@b.org' }, 'object'),
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
      { name: 'email of another subscriber', apply: (b) => (b.email = 'other@example.org') },
      ...stringMember('firstName', { max: 255, nullable: true, required: true }).filter((m) => m.name !== 'firstName=""'),
      ...statusMember('subscriberStatus', true, true),
      ...valuesMember('fields', true),
      ...idArray('tags', { known: () => [ctx.beta.id], unknownIsError: true, max: 1000, required: true }),
      ...unknownProperty,
      set('topicIds', [], 'topicIds'),
    ],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/email`,
    badPaths: subscriberPaths('/email'),
    base: () => ({ email: 'moved@example.org' }),
    mutations: () => [...emailMember('email'), { name: 'taken', apply: (b) => (b.email = 'Other@example.org') }, ...unknownProperty],
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
    mutations: () => [...idArray('topicIds', { known: () => [ctx.deals.id], unknownIsError: true, max: 1000, required: true }), ...boolMember('overrideOptOuts'), ...unknownProperty],
  },
  {
    method: 'POST',
    path: () => `/subscribers/${sid()}/topics/${ctx.deals.id}/opt-out`,
    badPaths: () => [`/subscribers/${sid()}/topics/${UNKNOWN_ID}/opt-out`, `/subscribers/${UNKNOWN_ID}/topics/${ctx.deals.id}/opt-out`, `/subscribers/${sid()}/topics/x/opt-out`],
    base: () => ({ source: 'preference centre' }),
    mutations: () => [...stringMember('source', { max: 100 }), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/subscribers/${sid()}/field-values/${ctx.text.fieldId}`,
    badPaths: () => [`/subscribers/${sid()}/field-values/${UNKNOWN_ID}`, `/subscribers/${UNKNOWN_ID}/field-values/${ctx.text.fieldId}`, `/subscribers/${sid()}/field-values/EMAIL`],
    base: () => ({ kind: 'TEXT', text: 'changed' }),
    mutations: () =>
      badValues().map((v) => ({
        name: `value: ${v.name}`,
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
        ...idArray('subscriberIds', { known: () => [sid()], unknownIsError: false, max: 10_000, required: true }),
        set('subscriberIds', []),
        ...idArray('tagIds', { known: () => [ctx.beta.id], unknownIsError: true, max: 1000, required: true }),
        set('tagIds', []),
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
      set('label', '   '),
      ...['CHOICE', 'text', '', null, 5].map((v) => set('fieldType', v)),
      remove('fieldType'),
      { name: 'options on TEXT', apply: (b) => (b.fieldType = 'TEXT') },
      { name: 'no options on choice', apply: (b) => delete b.options },
      set('options', []),
      set('options', ['a', 'A'], 'duplicate labels'),
      set('options', ['a', ''], 'empty label'),
      set('options', [huge(256)], 'huge label'),
      set('options', Array.from({ length: 501 }, (_, i) => `o${i}`), '501 options'),
      ...['x', 5, null, [5], [null]].map((v) => set('options', v)),
      ...['Colour', '1x', '_x', 'a-b', huge(65), 5, null].map((v) => set('personalizationTagName', v)),
      ...['email', 'first_name', 'nickname'].map((v) => set('personalizationTagName', v, `taken ${v}`)),
      ...boolMember('required'),
      ...boolMember('internal'),
      ...unknownProperty,
      set('active', false),
      set('position', 3),
    ],
  },
  {
    method: 'PATCH',
    path: () => `/fields/${ctx.single.fieldId}`,
    badPaths: () => [`/fields/${UNKNOWN_ID}`, '/fields/x', '/fields/EMAIL', '/fields/FIRST_NAME'],
    base: () => ({ label: 'Colour!', options: ctx.single.options.map((o: { id: string; label: string }) => ({ id: o.id, label: o.label })) }),
    mutations: () => [
      ...stringMember('label', { max: 255 }),
      ...boolMember('required'),
      ...boolMember('internal'),
      ...[-1, 0, 1, 1.5, 999, '2', null].map((v) => set('position', v)),
      set('options', []),
      { name: 'unknown option id', apply: (b) => list(b, 'options').push({ id: UNKNOWN_ID, label: 'New' }) },
      { name: 'option of another field', apply: (b) => list(b, 'options').push({ id: ctx.multi.options[0].id, label: 'New' }) },
      { name: 'malformed option id', apply: (b) => list(b, 'options').push({ id: pick(MALFORMED_IDS.filter(Boolean)), label: 'New' }) },
      { name: 'duplicate option id', apply: (b) => list(b, 'options').push({ id: ctx.single.options[0].id, label: 'Other' }, { id: ctx.single.options[0].id, label: 'Another' }) },
      { name: 'duplicate option label', apply: (b) => list(b, 'options').push({ id: null, label: 'x' }, { id: null, label: 'X' }) },
      { name: 'option without label', apply: (b) => list(b, 'options').push({ id: null }) },
      { name: 'option huge label', apply: (b) => list(b, 'options').push({ id: null, label: huge(256) }) },
      { name: 'option extra member', apply: (b) => list(b, 'options').push({ id: null, label: 'x', colour: 'red' }) },
      { name: 'option null', apply: (b) => list(b, 'options').push(null) },
      ...['x', 5, null, {}].map((v) => set('options', v)),
      ...['fieldType', 'personalizationTagName', 'active', 'type', 'fieldId'].map((k) => set(k, 'x', `immutable ${k}`)),
      ...unknownProperty,
    ],
  },
  {
    method: 'POST',
    path: () => '/tags',
    base: () => ({ name: `tag ${int(1e9)}` }),
    mutations: () => [...stringMember('name', { max: 100, required: true }), set('name', '  '), set('name', 'vip', 'existing'), ...unknownProperty],
  },
  {
    method: 'PUT',
    path: () => `/tags/${ctx.beta.id}`,
    badPaths: () => [`/tags/${UNKNOWN_ID}`, '/tags/x'],
    base: () => ({ name: 'Gamma' }),
    mutations: () => [...stringMember('name', { max: 100, required: true }), set('name', 'VIP', 'existing'), ...unknownProperty],
  },
  {
    method: 'POST',
    path: () => '/topics',
    base: () => ({ label: 'Fuzz topic', description: 'about', enrollExistingSubscribers: true }),
    mutations: () => [
      ...stringMember('label', { max: 255, required: true }),
      ...stringMember('description', { max: 2000, nullable: true, empty: false }),
      ...boolMember('enrollExistingSubscribers'),
      ...['isDefault', 'active', 'id'].map((k) => set(k, true, `unknown ${k}`)),
      ...unknownProperty,
    ],
  },
  {
    method: 'PATCH',
    path: () => `/topics/${ctx.news.id}`,
    badPaths: () => [`/topics/${UNKNOWN_ID}`, '/topics/x'],
    base: () => ({ label: 'News!', description: 'changed' }),
    mutations: () => [
      ...stringMember('label', { max: 255 }),
      ...stringMember('description', { max: 2000, nullable: true, empty: false }),
      ...boolMember('active'),
      ...boolMember('isDefault'),
      set('active', false, 'deactivate the default'),
      set('isDefault', false, 'un-default the default'),
      ...unknownProperty,
    ],
  },
];

function generate(): { route: Route; method: string; path: string; body: unknown; label: string } {
  const route = pick(ROUTES);
  const body = route.base();
  const all = route.mutations();
  const chosen: Mutation[] = [];
  const usePath = route.badPaths && random() < 0.15;
  const count = usePath ? int(2) : 1 + int(3);
  // Each mutation alone makes the request bad; one that no longer fits the body an earlier one
  // reshaped is skipped, and the loop goes on until `count` have applied.
  for (let attempts = 0; chosen.length < count && attempts < 50; attempts++) {
    const m = pick(all);
    try {
      m.apply(body);
      chosen.push(m);
    } catch {
      // shape changed by an earlier mutation
    }
  }
  if (!usePath && chosen.length === 0) throw new Error(`no mutation applied to ${route.method} ${route.path()}`);
  let path = usePath ? pick(route.badPaths!()) : route.path();
  if (body && typeof body === 'object' && '__path' in body) {
    if (!usePath) path = body.__path;
    delete body.__path;
  }
  const sent = body && typeof body === 'object' && '__raw' in body ? body.__raw : body;
  return { route, method: route.method, path, body: sent, label: `${route.method} ${path.replace(/[0-9a-f-]{36}/g, '<id>')} [${usePath ? 'bad path; ' : ''}${chosen.map((m) => m.name).join('; ')}]` };
}

it(`${CASES} generated bad requests: 4xx ErrorMessageDto, never 5xx, nothing partly written (seed ${SEED})`, async () => {
  const before = await snapshot(acc);
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < CASES; i++) {
    const { route, method, path, body, label } = generate();
    const res: ApiResponse =
      method === 'POST' ? await acc.post(path, body) : method === 'PUT' ? await acc.put(path, body) : await acc.patch(path, body);
    const key = `${res.status} ${res.json?.errorId ?? ''}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (route.rows && res.status === 200) {
      const outcomes = (res.json?.results ?? []).map((r: { outcome: string }) => r.outcome);
      if (!outcomes.length || outcomes.some((o: string) => o !== 'FAILED')) failures.push(`#${i} ${label}: 200 with ${JSON.stringify(res.json).slice(0, 300)}`);
      if (schemaErrors('SyncSubscribersResponse', res.json).length) failures.push(`#${i} ${label}: sync response does not match its schema`);
      continue;
    }
    if (res.status < 400 || res.status >= 500) failures.push(`#${i} ${label}: ${res.status} ${res.text.slice(0, 300)}`);
    else if (!res.json || schemaErrors('ErrorMessageDto', res.json).length) failures.push(`#${i} ${label}: ${res.status} not an ErrorMessageDto: ${res.text.slice(0, 200)}`);
    else if (res.json.errorId === 'validation_failed' && res.status !== 400) failures.push(`#${i} ${label}: ${res.status} validation_failed`);
  }
  if (process.env.FUZZ_VERBOSE) console.log([...seen].sort((x, y) => y[1] - x[1]));
  expect(failures).toEqual([]);
  // every kind of refusal was exercised
  const statuses = new Set([...seen.keys()].map((k) => k.split(' ')[0]));
  expect([...statuses].sort()).toEqual(expect.arrayContaining(['400', '404', '409']));
  expect(await snapshot(acc)).toEqual(before);
}, 300_000);
