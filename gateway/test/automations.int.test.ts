// Automations CRUD end to end: a real nats-server, the real subscriber, segment, form, rss and messaging
// services and a real gateway. What an integrator notices: an automation with every step type is
// saved when every id it names exists in the account, read back as saved, replaced, deleted;
// every refusal is a 400 naming the step member (unknown or foreign ids of each step type, bad
// durations, 0 and 51 steps, SET_FIELD values that do not fit their field), never a 5xx, also for
// generated bodies; templates an automation sends cannot be deleted and the fields it sets cannot be
// archived; tenant isolation; and an active automation matching an event's key shows in its outcome.
import { startMesh, waitFor, type ServiceMesh } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { expectError, sleep, startGateway, startStack, type ApiResponse, type GatewayHandle, type Stack } from './support/harness';
import { expectStatus, INSTANT_PATTERN, newAccount, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let mesh: ServiceMesh;
let gw: GatewayHandle;
let acme: Api;
let other: Api;

const account = (name: string) => newAccount(gw, name);

interface Catalog {
  template: string;
  topicId: string;
  tagId: string;
  tag2Id: string;
  textFieldId: string;
  choiceFieldId: string;
  optionId: string;
  inactiveOptionId: string;
  archivedFieldId: string;
  segmentId: string;
}

/** Everything a step can name, created in the account through the API. */
async function catalog(a: Api): Promise<Catalog> {
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' }), 201);
  expectStatus(await a.post('/email-templates', { name: 'welcome', subject: 'Hi', html: '<p>Hi {{ event.properties.plan }}</p>' }), 201);
  const topic = expectStatus(await a.post('/topics', { label: 'News' }), 201);
  const tag = expectStatus(await a.post('/tags', { name: 'customer' }), 201);
  const tag2 = expectStatus(await a.post('/tags', { name: 'vip' }), 201);
  const text = expectStatus(await a.post('/fields', { label: 'Plan', fieldType: 'TEXT' }), 201);
  const choice = expectStatus(await a.post('/fields', { label: 'Size', fieldType: 'SINGLE_CHOICE', options: ['S', 'M'] }), 201);
  const [s, m] = choice.options;
  // M is deactivated: omitted options are deactivated
  expectStatus(await a.patch(`/fields/${choice.fieldId}`, { options: [{ id: s.id, label: 'S' }] }), 200);
  const archived = expectStatus(await a.post('/fields', { label: 'Old', fieldType: 'NUMBER' }), 201);
  expectStatus(await a.post(`/fields/${archived.fieldId}/archive`), 200);
  const seg = expectStatus(
    await a.post('/segments', {
      name: 'An*',
      expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'An' } }] }] },
    }),
    201,
  );
  return {
    template: 'welcome',
    topicId: topic.id,
    tagId: tag.id,
    tag2Id: tag2.id,
    textFieldId: text.fieldId,
    choiceFieldId: choice.fieldId,
    optionId: s.id,
    inactiveOptionId: m.id,
    archivedFieldId: archived.fieldId,
    segmentId: seg.id,
  };
}

let cat: Catalog;
let otherCat: Catalog;

/** One step of every type, naming the catalog's ids. */
const everyStep = (c: Catalog) => [
  { type: 'SEND_EMAIL', templateName: c.template, topicId: c.topicId },
  { type: 'WAIT', duration: 'P1DT12H' },
  { type: 'ADD_TAGS', tagIds: [c.tagId, c.tag2Id] },
  { type: 'REMOVE_TAGS', tagIds: [c.tag2Id] },
  { type: 'SET_FIELD', fieldId: c.textFieldId, value: { kind: 'TEXT', text: 'gold' } },
  { type: 'SET_FIELD', fieldId: c.choiceFieldId, value: { kind: 'SINGLE_OPTION', optionId: c.optionId } },
  { type: 'SET_FIELD', fieldId: c.textFieldId, fromProperty: 'plan.name' },
  { type: 'IF_IN_SEGMENT', segmentId: c.segmentId },
  { type: 'SEND_EMAIL', templateName: c.template },
];

const body = (steps: unknown[], extra: Record<string, unknown> = {}) => ({ name: 'Onboarding', trigger: { type: 'API_REQUEST', eventKey: 'account.created' }, steps, ...extra });

/** The 400's details as [path, ...] (the order of the steps), after checking the errorId. */
function refused(res: ApiResponse, errorId: string): string[] {
  expectError(res, 400, errorId);
  return (res.json.details ?? []).map((d: { path: string }) => d.path);
}

beforeAll(async () => {
  stack = await startStack(0);
  // All real: messaging answers the field-usage questions of the subscriber service about the fields
  // automation steps set (with segment, form and rss, the other usage sources), and says which steps
  // name a segment or topic before one is deleted; the form service which forms name a template.
  mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'segment', 'form', 'rss', 'messaging'], { messaging: { MAIL_SEND_PAUSED: 'true' } });
  gw = await startGateway({ NATS_URL: stack.nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  acme = await account('acme');
  other = await account('other');
  cat = await catalog(acme);
  otherCat = await catalog(other);
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await mesh?.stop();
  await stack?.stop();
});

describe('automations CRUD', () => {
  it('creates an automation with every step type (defaults: EVERY_EVENT, inactive, zero stats), reads, lists, replaces and deletes it', async () => {
    const res = await acme.post('/automations', body(everyStep(cat)));
    const created = expectStatus(res, 201);
    expect(schemaErrors('Automation', created)).toEqual([]);
    expect(res.headers.get('location')).toBe(`/automations/${created.id}`);
    expect(created).toEqual({
      id: expect.stringMatching(UUID_PATTERN),
      name: 'Onboarding',
      trigger: { type: 'API_REQUEST', eventKey: 'account.created' },
      entry: 'EVERY_EVENT',
      steps: everyStep(cat).map((s) => (s.type === 'SEND_EMAIL' && !('topicId' in s) ? { ...s, topicId: null } : s)),
      active: false,
      createdAt: expect.stringMatching(INSTANT_PATTERN),
      updatedAt: created.createdAt,
      stats: { runsStarted: 0, runsCompleted: 0 },
    });
    expect(expectStatus(await acme.get(`/automations/${created.id}`), 200)).toEqual(created);
    expect(expectStatus(await acme.get(`/automations/${created.id.toUpperCase()}`), 200)).toEqual(created);
    const list = expectStatus(await acme.get('/automations'), 200);
    expect(schemaErrors('AutomationList', list)).toEqual([]);
    expect(list.items.map((a: { id: string }) => a.id)).toContain(created.id);

    // a GET answer can be PUT back; a replacement changes what it carries and keeps id, createdAt, stats
    const { name, trigger, steps } = created;
    expect(expectStatus(await acme.put(`/automations/${created.id}`, { name, trigger, steps, entry: 'ONCE', active: true }), 200)).toMatchObject({ entry: 'ONCE', active: true });
    await sleep(5);
    const replaced = expectStatus(await acme.put(`/automations/${created.id}`, body([{ type: 'WAIT', duration: 'PT1S' }], { name: ' Renamed ', entry: 'ONE_AT_A_TIME' })), 200);
    expect(replaced).toMatchObject({ id: created.id, name: 'Renamed', entry: 'ONE_AT_A_TIME', active: false, steps: [{ type: 'WAIT', duration: 'PT1S' }], createdAt: created.createdAt, stats: { runsStarted: 0, runsCompleted: 0 } });
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThan(Date.parse(created.createdAt));
    expect(expectStatus(await acme.get(`/automations/${created.id}`), 200)).toEqual(replaced);

    // runs: an empty page until runs exist
    const runs = expectStatus(await acme.get(`/automations/${created.id}/runs?status=WAITING`), 200);
    expect(runs).toEqual({ items: [], pageNumber: 1, pageSize: 50, totalItems: 0, totalPages: 0 });
    expect(schemaErrors('PaginatedAutomationRuns', runs)).toEqual([]);

    expect((await acme.delete(`/automations/${created.id}`)).status).toBe(204);
    expectError(await acme.get(`/automations/${created.id}`), 404, 'automation_not_found');
    expectError(await acme.delete(`/automations/${created.id}`), 404, 'automation_not_found');
    expectError(await acme.get(`/automations/${created.id}/runs`), 404, 'automation_not_found');
    expectError(await acme.put(`/automations/${created.id}`, body([{ type: 'WAIT', duration: 'PT1S' }])), 404, 'automation_not_found');
  });

  it('unknown and foreign ids of every step type are 400 automation_reference_not_found naming each step member', async () => {
    const foreign = everyStep(otherCat); // every id exists, in the other account
    expect(refused(await acme.post('/automations', body(foreign.filter((s) => s.type !== 'SEND_EMAIL' || 'topicId' in s))), 'automation_reference_not_found')).toEqual([
      'body.steps[0].topicId',
      'body.steps[2].tagIds[0]',
      'body.steps[2].tagIds[1]',
      'body.steps[3].tagIds[0]',
      'body.steps[4].fieldId',
      'body.steps[5].fieldId',
      'body.steps[6].fieldId',
      'body.steps[7].segmentId',
    ]);
    const unknown = [
      { type: 'SEND_EMAIL', templateName: 'nope' },
      { type: 'SEND_EMAIL', templateName: cat.template, topicId: UNKNOWN_ID },
      { type: 'ADD_TAGS', tagIds: [cat.tagId, UNKNOWN_ID] },
      { type: 'REMOVE_TAGS', tagIds: [UNKNOWN_ID] },
      { type: 'SET_FIELD', fieldId: UNKNOWN_ID, fromProperty: 'x' },
      { type: 'SET_FIELD', fieldId: cat.choiceFieldId, value: { kind: 'SINGLE_OPTION', optionId: otherCat.optionId } },
      { type: 'IF_IN_SEGMENT', segmentId: UNKNOWN_ID },
    ];
    const res = await acme.post('/automations', body(unknown));
    expect(refused(res, 'automation_reference_not_found')).toEqual([
      'body.steps[0].templateName',
      'body.steps[1].topicId',
      'body.steps[2].tagIds[1]',
      'body.steps[3].tagIds[0]',
      'body.steps[4].fieldId',
      'body.steps[5].value.optionId',
      'body.steps[6].segmentId',
    ]);
    expect(res.json.message).toMatch(/^body\.steps\[0\]\.templateName: .*and 6 more problems/);
    // templates are the account's own: a name only another account has is unknown here
    expectStatus(await acme.post('/email-templates', { name: 'acme-only', subject: 'Hi', html: '<p>Hi</p>' }), 201);
    expect(refused(await other.post('/automations', body([{ type: 'SEND_EMAIL', templateName: 'acme-only' }])), 'automation_reference_not_found')).toEqual(['body.steps[0].templateName']);
    // nothing was saved
    expect(expectStatus(await other.get('/automations'), 200).items).toEqual([]);
  });

  it('WAIT durations outside PT1S .. P365D or not ISO 8601 weeks-to-seconds are 400 automation_wait_duration_invalid', async () => {
    const durations = ['P1M', 'P1Y', 'PT0S', 'P366D', 'P53W', 'PT0.5S', 'abc', '1 day', 'P', 'PT'];
    const res = await acme.post('/automations', body([{ type: 'WAIT', duration: 'P365D' }, ...durations.map((duration) => ({ type: 'WAIT', duration }))]));
    expect(refused(res, 'automation_wait_duration_invalid')).toEqual(durations.map((_, i) => `body.steps[${i + 1}].duration`));
    for (const duration of ['PT1S', 'P365D', 'P52W1D', 'PT90M', 'P2DT3H4M5S']) {
      expectStatus(await acme.post('/automations', body([{ type: 'WAIT', duration }])), 201);
    }
  });

  it('0 and 51 steps are 400 validation_failed at body.steps; 50 are fine', async () => {
    const wait = { type: 'WAIT', duration: 'PT1M' };
    expect(refused(await acme.post('/automations', body([])), 'validation_failed')).toEqual(['body.steps']);
    expect(refused(await acme.post('/automations', body(Array(51).fill(wait))), 'validation_failed')).toEqual(['body.steps']);
    expect(expectStatus(await acme.post('/automations', body(Array(50).fill(wait))), 201).steps).toHaveLength(50);
  });

  it('SET_FIELD values must fit their field; a step must be of a known type with its members', async () => {
    const setField = (step: Record<string, unknown>) => acme.post('/automations', body([{ type: 'SET_FIELD', ...step }]));
    expect(refused(await setField({ fieldId: cat.textFieldId, value: { kind: 'NUMBER', number: 1 } }), 'field_value_kind_mismatch')).toEqual(['body.steps[0].value.kind']);
    expect(refused(await setField({ fieldId: cat.choiceFieldId, value: { kind: 'SINGLE_OPTION', optionId: cat.inactiveOptionId } }), 'option_inactive')).toEqual(['body.steps[0].value.optionId']);
    expect(refused(await setField({ fieldId: cat.archivedFieldId, value: { kind: 'NUMBER', number: 1 } }), 'automation_field_archived')).toEqual(['body.steps[0].fieldId']);
    expect(refused(await setField({ fieldId: cat.archivedFieldId, fromProperty: 'n' }), 'automation_field_archived')).toEqual(['body.steps[0].fieldId']);
    expect(refused(await setField({ fieldId: cat.textFieldId }), 'validation_failed')).toEqual(['body.steps[0]']);
    expect(refused(await setField({ fieldId: cat.textFieldId, value: { kind: 'TEXT', text: 'x' }, fromProperty: 'a' }), 'validation_failed')).toEqual(['body.steps[0]']);
    expect(refused(await setField({ fieldId: cat.textFieldId, fromProperty: 'a..b' }), 'validation_failed')).toEqual(['body.steps[0].fromProperty']);
    expect(refused(await setField({ fieldId: cat.textFieldId, value: { kind: 'TEXT', text: 'x'.repeat(10_001) } }), 'validation_failed')).toEqual(['body.steps[0].value.text']);
    expect(refused(await setField({ fieldId: 'not-a-uuid', fromProperty: 'a' }), 'invalid_uuid')[0]).toMatch(/^body\.steps\[0\]\.fieldId/);

    expect(refused(await acme.post('/automations', body([{ type: 'SEND_SMS', text: 'hi' }])), 'validation_failed')[0]).toMatch(/^body\.steps\[0\]/);
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D', extra: 1 }])), 400, 'unknown_property');
    expectError(await acme.post('/automations', body([{ type: 'ADD_TAGS', tagIds: [cat.tagId, cat.tagId] }])), 400, 'duplicate_ids');
    expectError(await acme.post('/automations', body([{ type: 'ADD_TAGS', tagIds: [] }])), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'SEND_EMAIL', templateName: 'Bad Name' }])), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { trigger: { type: 'SCHEDULE', eventKey: 'x' } })), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { trigger: { type: 'API_REQUEST', eventKey: 'Order Paid' } })), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { entry: 'TWICE' })), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { name: '' })), 400, 'validation_failed');
    expectError(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { name: '   ' })), 400, 'validation_failed');
    expectError(await acme.get('/automations/not-a-uuid'), 400, 'invalid_uuid');
  });

  it('a template an automation sends cannot be deleted (409 template_in_use); a field it sets cannot be archived (409 field_archive_blocked)', async () => {
    const a = await account('in-use');
    const c = await catalog(a);
    expectStatus(await a.post('/email-templates', { name: 'bye', subject: 'Bye', html: '<p>Bye</p>' }), 201);
    const auto = expectStatus(await a.post('/automations', body([{ type: 'SEND_EMAIL', templateName: 'bye' }, { type: 'SET_FIELD', fieldId: c.textFieldId, fromProperty: 'plan' }])), 201);
    const inUse = await a.delete('/email-templates/bye');
    expectError(inUse, 409, 'template_in_use');
    expect(inUse.json.details).toEqual([{ path: `automations.${auto.id}`, problem: expect.any(String) }]);
    const blocked = await a.post(`/fields/${c.textFieldId}/archive`);
    expectError(blocked, 409, 'field_archive_blocked');
    expect(JSON.stringify(blocked.json.details)).toContain(auto.id);

    // once the automation no longer names them, both go
    expectStatus(await a.put(`/automations/${auto.id}`, body([{ type: 'WAIT', duration: 'P1D' }])), 200);
    expect((await a.delete('/email-templates/bye')).status).toBe(204);
    expectStatus(await a.post(`/fields/${c.textFieldId}/archive`), 200);
  });

  it('a segment an IF_IN_SEGMENT step checks and a topic a SEND_EMAIL step sends to cannot be deleted (409 segment_in_use / topic_in_use) until no step names them', async () => {
    const a = await account('audience-in-use');
    const c = await catalog(a);
    const auto = expectStatus(await a.post('/automations', body([{ type: 'IF_IN_SEGMENT', segmentId: c.segmentId }, { type: 'SEND_EMAIL', templateName: c.template, topicId: c.topicId }])), 201);
    const segmentInUse = await a.delete(`/segments/${c.segmentId}`);
    expectError(segmentInUse, 409, 'segment_in_use');
    expect(segmentInUse.json.details).toEqual([{ path: `automations.${auto.id}`, problem: '"Onboarding" checks this segment in an IF_IN_SEGMENT step' }]);
    const topicInUse = await a.delete(`/topics/${c.topicId}`);
    expectError(topicInUse, 409, 'topic_in_use');
    expect(topicInUse.json.details).toEqual([{ path: `automations.${auto.id}`, problem: '"Onboarding" sends to this topic in a SEND_EMAIL step' }]);
    // Both are still there.
    expectStatus(await a.get(`/segments/${c.segmentId}`), 200);
    expect(expectStatus(await a.get('/topics'), 200).items.map((t: { id: string }) => t.id)).toContain(c.topicId);

    expectStatus(await a.put(`/automations/${auto.id}`, body([{ type: 'SEND_EMAIL', templateName: c.template }])), 200);
    expect((await a.delete(`/segments/${c.segmentId}`)).status).toBe(204);
    expect((await a.delete(`/topics/${c.topicId}`)).status).toBe(204);
  });

  it('tenant isolation: another account can neither see, change nor delete an automation', async () => {
    const mine = expectStatus(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }], { name: 'Mine' })), 201);
    expectError(await other.get(`/automations/${mine.id}`), 404, 'automation_not_found');
    expectError(await other.put(`/automations/${mine.id}`, body([{ type: 'WAIT', duration: 'P2D' }])), 404, 'automation_not_found');
    expectError(await other.delete(`/automations/${mine.id}`), 404, 'automation_not_found');
    expectError(await other.get(`/automations/${mine.id}/runs`), 404, 'automation_not_found');
    expect(expectStatus(await other.get('/automations'), 200).items.map((x: { id: string }) => x.id)).not.toContain(mine.id);
    expect(expectStatus(await acme.get(`/automations/${mine.id}`), 200)).toEqual(mine);
  });
});

describe('events and automations', () => {
  it("an active automation on the event's key makes the outcome RUNS_STARTED with its run; inactive or another key, NO_MATCHING_AUTOMATION", async () => {
    const a = await account('matching');
    expectStatus(await a.post('/subscribers', { email: 'ann@example.org' }), 201);
    const wait = [{ type: 'WAIT', duration: 'P1D' }];
    expectStatus(await a.post('/automations', { ...body(wait), trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, active: true }), 201);
    expectStatus(await a.post('/automations', { ...body(wait), trigger: { type: 'API_REQUEST', eventKey: 'cart.left' }, active: false }), 201);
    const post = async (eventKey: string) => expectStatus(await a.post('/events', { eventKey, email: 'ann@example.org' }), 202).eventId as string;
    const ids = { paid: await post('order.paid'), left: await post('cart.left'), other: await post('other.key') };
    const items: Array<{ eventId: string; outcome: string; runIds: string[] }> = await waitFor('the 3 events recorded', async () => {
      const listed = expectStatus(await a.get('/events'), 200).items;
      return listed.length === 3 && listed;
    }, 30_000);
    const outcome = (id: string) => items.find((e) => e.eventId === id);
    expect(outcome(ids.paid)).toMatchObject({ outcome: 'RUNS_STARTED', runIds: [expect.stringMatching(UUID_PATTERN)] });
    expect(outcome(ids.left)).toMatchObject({ outcome: 'NO_MATCHING_AUTOMATION', runIds: [] });
    expect(outcome(ids.other)).toMatchObject({ outcome: 'NO_MATCHING_AUTOMATION', runIds: [] });
  });
});

// ---- generated bodies --------------------------------------------------------------------------

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

describe('generated automation bodies', () => {
  const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
  const CASES = Number(process.env.FUZZ_CASES ?? 300);
  const random = rng(SEED);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];

  /** Valid steps of every type, in many shapes. */
  const validSteps = (c: Catalog): unknown[] => [
    ...everyStep(c),
    ...['PT1S', 'P365D', 'P52W1D', 'PT90M', 'P2DT3H4M5S'].map((duration) => ({ type: 'WAIT', duration })),
    { type: 'SEND_EMAIL', templateName: c.template, topicId: null },
    { type: 'SET_FIELD', fieldId: c.textFieldId.toUpperCase(), value: { kind: 'TEXT', text: 'Zoë 😀' } },
    { type: 'ADD_TAGS', tagIds: [c.tag2Id] },
  ];
  // A bad step: [the step, status, errorId, the member details names, relative to the step]
  type BadStep = [unknown, number, string, string];
  const badSteps = (c: Catalog, theirs: Catalog): BadStep[] => [
    [{ type: 'SEND_EMAIL', templateName: 'nope' }, 400, 'automation_reference_not_found', '.templateName'],
    [{ type: 'SEND_EMAIL', templateName: c.template, topicId: pick([UNKNOWN_ID, theirs.topicId]) }, 400, 'automation_reference_not_found', '.topicId'],
    [{ type: 'SEND_EMAIL', templateName: c.template, topicId: 'x' }, 400, 'invalid_uuid', '.topicId'],
    [{ type: 'SEND_EMAIL', templateName: pick(['Bad Name', '', '-x']) }, 400, 'validation_failed', '.templateName'],
    [{ type: 'SEND_EMAIL' }, 400, 'validation_failed', '.templateName'],
    [{ type: 'WAIT', duration: pick(['P1M', 'P1Y', 'PT0S', 'P366D', 'P53W', 'PT0.5S', 'abc', '1 day', 'P', 'PT', '-P1D']) }, 400, 'automation_wait_duration_invalid', '.duration'],
    [{ type: 'WAIT', duration: pick([5, null, '', 'P'.repeat(41)]) }, 400, 'validation_failed', '.duration'],
    ((k) => [{ type: 'WAIT', duration: 'P1D', [k]: 1 }, 400, 'unknown_property', `.${k}`])(pick(['extra', 'tagIds', '__x'])),
    [{ type: 'ADD_TAGS', tagIds: [c.tagId, pick([UNKNOWN_ID, theirs.tagId])] }, 400, 'automation_reference_not_found', '.tagIds[1]'],
    [{ type: pick(['ADD_TAGS', 'REMOVE_TAGS']), tagIds: [c.tagId, c.tagId] }, 400, 'duplicate_ids', '.tagIds'],
    [{ type: pick(['ADD_TAGS', 'REMOVE_TAGS']), tagIds: pick([[], 'x', null]) }, 400, 'validation_failed', '.tagIds'],
    [{ type: 'REMOVE_TAGS', tagIds: ['x'] }, 400, 'invalid_uuid', '.tagIds[0]'],
    [{ type: 'SET_FIELD', fieldId: pick([UNKNOWN_ID, theirs.textFieldId]), fromProperty: 'x' }, 400, 'automation_reference_not_found', '.fieldId'],
    [{ type: 'SET_FIELD', fieldId: c.textFieldId, value: { kind: 'NUMBER', number: 1 } }, 400, 'field_value_kind_mismatch', '.value.kind'],
    [{ type: 'SET_FIELD', fieldId: c.choiceFieldId, value: { kind: 'SINGLE_OPTION', optionId: c.inactiveOptionId } }, 400, 'option_inactive', '.value.optionId'],
    [{ type: 'SET_FIELD', fieldId: c.choiceFieldId, value: { kind: 'SINGLE_OPTION', optionId: theirs.optionId } }, 400, 'automation_reference_not_found', '.value.optionId'],
    [{ type: 'SET_FIELD', fieldId: c.archivedFieldId, ...pick([{ fromProperty: 'n' }, { value: { kind: 'NUMBER', number: 1 } }]) }, 400, 'automation_field_archived', '.fieldId'],
    [{ type: 'SET_FIELD', fieldId: c.textFieldId, ...pick([{}, { value: { kind: 'TEXT', text: 'x' }, fromProperty: 'a' }]) }, 400, 'validation_failed', ''],
    [{ type: 'SET_FIELD', fieldId: c.textFieldId, fromProperty: pick(['a..b', '.a', 'a.']) }, 400, 'validation_failed', '.fromProperty'],
    [{ type: 'SET_FIELD', fieldId: c.textFieldId, value: { kind: 'TEXT', text: 'x'.repeat(10_001) } }, 400, 'validation_failed', '.value.text'],
    [{ type: 'SET_FIELD', fieldId: 'not-a-uuid', fromProperty: 'a' }, 400, 'invalid_uuid', '.fieldId'],
    [{ type: 'IF_IN_SEGMENT', segmentId: pick([UNKNOWN_ID, theirs.segmentId]) }, 400, 'automation_reference_not_found', '.segmentId'],
    [{ type: pick(['SEND_SMS', 'wait', '', null]), text: 'hi' }, 400, 'validation_failed', '.type'],
  ];
  // A bad top-level member: [member, value (undefined: removed), errorId, the member details names]
  const BAD_TOP: Array<[string, unknown, string, string]> = [
    ...['', '   ', 5, null, 'x'.repeat(201), undefined].map((v): [string, unknown, string, string] => ['name', v, 'validation_failed', 'body.name']),
    ['trigger', { type: 'SCHEDULE', eventKey: 'x' }, 'validation_failed', 'body.trigger.type'],
    ['trigger', { type: 'API_REQUEST', eventKey: pick(['Order Paid', '', '.x']) }, 'validation_failed', 'body.trigger.eventKey'],
    ['trigger', undefined, 'validation_failed', 'body.trigger'],
    ['entry', pick(['TWICE', 'once', null]), 'validation_failed', 'body.entry'],
    ['steps', [], 'validation_failed', 'body.steps'],
    ['steps', undefined, 'validation_failed', 'body.steps'],
    ['active', pick(['yes', 1, null]), 'validation_failed', 'body.active'],
    ['stats', { runsStarted: 1 }, 'unknown_property', 'body.stats'],
    ['id', UNKNOWN_ID, 'unknown_property', 'body.id'],
  ];

  it(`${CASES} generated bodies, each valid or with one bad member: 201/200 with an Automation, or its status, errorId and member`, async () => {
    const existing = expectStatus(await acme.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }])), 201);
    const failures: string[] = [];
    const outcomes = new Set<string>();
    for (let i = 0; i < CASES; i++) {
      const steps = Array.from({ length: 1 + int(6) }, () => pick(validSteps(cat)));
      const candidate: Record<string, unknown> = body(steps, { name: pick(['Onboarding', ' Trial ', 'Zoë 中文']), ...pick([{}, { entry: pick(['EVERY_EVENT', 'ONCE', 'ONE_AT_A_TIME']) }]), ...pick([{}, { active: pick([true, false]) }]) });
      let want: { status: number; errorId?: string; member?: string };
      if (i % 10 === 9) want = { status: 0 };
      else if (int(3) === 0) {
        const [member, value, errorId, path] = pick(BAD_TOP);
        if (value === undefined) delete candidate[member];
        else candidate[member] = value;
        want = { status: 400, errorId, member: path };
      } else {
        const [step, status, errorId, suffix] = pick(badSteps(cat, otherCat));
        const at = int(steps.length + 1);
        steps.splice(at, 0, step);
        want = { status, errorId, member: `body.steps[${at}]${suffix}` };
      }
      const put = int(2) === 0;
      const res = put ? await acme.put(`/automations/${existing.id}`, candidate) : await acme.post('/automations', candidate);
      if (!want.errorId) want = { status: put ? 200 : 201 };
      const paths: string[] = (res.json?.details ?? []).map((d: { path: string }) => d.path);
      const got = { status: res.status, errorId: res.json?.errorId, member: want.member && paths.includes(want.member) ? want.member : paths.join(' ') || undefined };
      if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`#${i} (seed ${SEED}) ${put ? 'PUT' : 'POST'}: ${JSON.stringify(want)} expected, got ${res.status} ${res.text.slice(0, 300)} for ${JSON.stringify(candidate).slice(0, 300)}`);
      else if (want.errorId) expect(schemaErrors('ErrorMessageDto', res.json)).toEqual([]);
      else expect(schemaErrors('Automation', res.json)).toEqual([]);
      outcomes.add(want.errorId ?? 'saved');
    }
    expect(failures).toEqual([]);
    // the generator reached the service's own checks, not only the schema's
    expect(outcomes).toEqual(new Set(['saved', 'validation_failed', 'unknown_property', 'invalid_uuid', 'duplicate_ids', 'automation_reference_not_found', 'automation_wait_duration_invalid', 'automation_field_archived', 'field_value_kind_mismatch', 'option_inactive']));
  }, 600_000);
});

describe('a peer that does not answer', () => {
  it('the segment service down: a body naming a segment is 503 service_unavailable and nothing is saved; others are saved', async () => {
    const a = await account('peer-down');
    await mesh.get('segment').stop();
    const res = await a.post('/automations', body([{ type: 'IF_IN_SEGMENT', segmentId: UNKNOWN_ID }]));
    expectError(res, 503, 'service_unavailable');
    expect(res.json.message).toMatch(/segment/);
    expect(expectStatus(await a.get('/automations'), 200).items).toEqual([]);
    expectStatus(await a.post('/automations', body([{ type: 'WAIT', duration: 'P1D' }])), 201);
  }, 60_000);
});
