// Signup forms through the real gateway, with the real subscriber, form and messaging services
// (support/form-stack.ts): CRUD with the catalog resolved, every rule of a form body and its errorId,
// routePath uniqueness across accounts (also under concurrent requests), the landing page states,
// activation and the embedding, field usages (GET /fields/{id}/forms, archival blocked by an active
// form), sender profiles and templates a form names (not deletable), tenant isolation, and fuzzed
// bodies that must never end in a 5xx.
import { schemaErrors } from '../src/openapi/validator';
import { expectError, type ApiResponse } from './support/harness';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, INSTANT_PATTERN, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

jest.setTimeout(120_000);

const PUBLIC_BASE_URL = 'https://mail.forms.test';
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

let env: FormStack;
let a: Api;
let b: Api;

beforeAll(async () => {
  env = await startFormStack({ publicBaseUrl: PUBLIC_BASE_URL, peers: ['segment'] }); // segment: the last field usage source (a field is archived)
  a = await env.account('forms-a');
  b = await env.account('forms-b');
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

const EMAIL = { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true };
const FIRST_NAME = { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, isRequired: false };
const custom = (fieldId: string, extra: Record<string, unknown> = {}) => ({ fieldRef: { type: 'CUSTOM', fieldId }, isRequired: false, ...extra });
const formBody = (extra: Record<string, unknown> = {}) => ({ name: 'Newsletter', type: 'DEFAULT', inputFields: [EMAIL], ...extra });

let seq = 0;
/** A new custom field of the account; its id. */
async function field(api: Api, extra: Record<string, unknown> = {}): Promise<string> {
  seq += 1;
  return expectStatus(await api.post('/fields', { label: `Field ${seq}`, fieldType: 'TEXT', personalizationTagName: `f_${seq}`, ...extra }), 201).fieldId;
}
async function topic(api: Api, label = `Topic ${++seq}`): Promise<string> {
  return expectStatus(await api.post('/topics', { label }), 201).id;
}
async function createForm(api: Api, body: Record<string, unknown>): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const form = expectStatus(await api.post('/forms', body), 201);
  expect(schemaErrors('Form', form)).toEqual([]);
  return form;
}
const overview = (res: ApiResponse, status = 200) => {
  const body = expectStatus(res, status);
  expect(schemaErrors('FormOverviewDto', body)).toEqual([]);
  return body;
};
/** The error's `details` paths. */
const pathsOf = (res: ApiResponse) => (res.json?.details ?? []).map((d: { path: string }) => d.path);

describe('CRUD', () => {
  it('creates a form resolved against the catalog, lists, gets, replaces and deletes it', async () => {
    const plan = await field(a, { label: 'Plan', fieldType: 'SINGLE_CHOICE', options: ['Free', 'Pro', 'Legacy'] });
    // Deactivate an option: optionValues hold only the active options' labels.
    const stored = expectStatus(await a.get(`/fields/${plan}`), 200);
    const options = stored.options.map((o: { id: string; label: string }) => (o.label === 'Legacy' ? null : { id: o.id, label: o.label }));
    expectStatus(await a.patch(`/fields/${plan}`, { options: options.filter(Boolean) }), 200);
    const notes = await field(a, { label: 'Notes', fieldType: 'LONG_TEXT' });
    const news = await topic(a);

    const res = await a.post('/forms', {
      name: ' Spring signup ',
      type: 'POPUP',
      inputFields: [FIRST_NAME, { ...EMAIL, label: 'Your email', placeholder: 'you@example.org' }, custom(plan.toUpperCase(), { isRequired: true, inputControl: 'RADIO_GROUP' }), custom(notes)],
      topicIds: [news.toUpperCase()],
      allowedOrigins: ['https://Shop.Example.com/'],
    });
    const form = expectStatus(res, 201);
    expect(schemaErrors('Form', form)).toEqual([]);
    expect(res.headers.get('location')).toBe(`/forms/${form.id}`);
    expect(form).toMatchObject({
      id: expect.stringMatching(UUID_PATTERN),
      name: 'Spring signup',
      type: 'POPUP',
      status: 'ACTIVE',
      publishedStatus: 'DRAFT',
      publicUrl: null,
      lastPublishedAt: null,
      routePath: null,
      domain: null,
      topicIds: [news],
      doubleOptIn: true,
      senderProfileId: null,
      confirmationTemplateName: null,
      allowedOrigins: ['https://shop.example.com'],
      createdAt: expect.stringMatching(INSTANT_PATTERN),
    });
    expect(form.inputFields).toEqual([
      { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, personalizationTagName: 'first_name', label: expect.any(String), placeholder: '', isRequired: false, position: 0, fieldType: 'TEXT', inputControl: 'TEXT_INPUT', optionValues: [] },
      { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, personalizationTagName: 'email', label: 'Your email', placeholder: 'you@example.org', isRequired: true, position: 1, fieldType: 'EMAIL', inputControl: 'EMAIL_INPUT', optionValues: [] },
      { fieldRef: { type: 'CUSTOM', fieldId: plan }, personalizationTagName: expect.any(String), label: 'Plan', placeholder: '', isRequired: true, position: 2, fieldType: 'SINGLE_CHOICE', inputControl: 'RADIO_GROUP', optionValues: ['Free', 'Pro'] },
      { fieldRef: { type: 'CUSTOM', fieldId: notes }, personalizationTagName: expect.any(String), label: 'Notes', placeholder: '', isRequired: false, position: 3, fieldType: 'LONG_TEXT', inputControl: 'TEXTAREA', optionValues: [] },
    ]);

    expect(expectStatus(await a.get(`/forms/${form.id.toUpperCase()}`), 200)).toEqual(form);
    const list = expectStatus(await a.get('/forms'), 200);
    expect(schemaErrors('FormOverviewList', list)).toEqual([]);
    expect(list.items.find((f: { id: string }) => f.id === form.id)).toEqual({
      id: form.id, name: 'Spring signup', type: 'POPUP', status: 'ACTIVE', publishedStatus: 'DRAFT', publicUrl: null, lastPublishedAt: null, routePath: null, domain: null,
    });

    // PUT replaces every member (absent optional ones cleared) and keeps status and times of creation.
    const replaced = expectStatus(await a.put(`/forms/${form.id}`, formBody({ name: 'Footer', type: 'INLINE', doubleOptIn: false })), 200);
    expect(schemaErrors('Form', replaced)).toEqual([]);
    expect(replaced).toMatchObject({ id: form.id, name: 'Footer', type: 'INLINE', status: 'ACTIVE', doubleOptIn: false, topicIds: [], allowedOrigins: [], createdAt: form.createdAt });
    expect(replaced.inputFields).toHaveLength(1);
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThanOrEqual(Date.parse(form.updatedAt));

    expect((await a.delete(`/forms/${form.id}`)).status).toBe(204);
    for (const res of [await a.get(`/forms/${form.id}`), await a.put(`/forms/${form.id}`, formBody()), await a.delete(`/forms/${form.id}`), await a.post(`/forms/${form.id}/activate`), await a.get(`/forms/${form.id}/embedding`)])
      expectError(res, 404, 'form_not_found');
    expectError(await a.get('/forms/not-a-uuid'), 400, 'invalid_uuid');
  });
});

describe('allowedOrigins', () => {
  it('a repeated origin, in any spelling, is stored once on POST and PUT (first spelling\'s position kept)', async () => {
    const repeated = ['https://shop.example.com', 'https://SHOP.example.com:443/', 'http://localhost:3000', 'https://shop.example.com'];
    const form = await createForm(a, formBody({ name: 'Origins', allowedOrigins: repeated }));
    expect(form.allowedOrigins).toEqual(['https://shop.example.com', 'http://localhost:3000']);
    const replaced = expectStatus(await a.put(`/forms/${form.id}`, formBody({ name: 'Origins', allowedOrigins: [...repeated].reverse() })), 200);
    expect(replaced.allowedOrigins).toEqual(['https://shop.example.com', 'http://localhost:3000']);
    expect(expectStatus(await a.get(`/forms/${form.id}`), 200).allowedOrigins).toEqual(['https://shop.example.com', 'http://localhost:3000']);
  });
});

describe('rules of a form body', () => {
  it('answers each broken rule with its errorId and the member in details', async () => {
    const text = await field(a);
    const secret = await field(a, { internal: true });
    const archived = await field(a);
    expectStatus(await a.post(`/fields/${archived}/archive`), 200);
    const closed = await topic(a);
    expectStatus(await a.patch(`/topics/${closed}`, { active: false }), 200);

    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [formBody({ inputFields: [custom(text)] }), 400, 'form_email_field_required'],
      [formBody({ inputFields: [{ ...EMAIL, isRequired: false }] }), 400, 'form_email_field_required'],
      [formBody({ inputFields: [EMAIL, custom(UNKNOWN_ID)] }), 404, 'field_not_found', 'body.inputFields[1].fieldRef'],
      [formBody({ inputFields: [EMAIL, custom(archived)] }), 409, 'field_archived', 'body.inputFields[1].fieldRef'],
      [formBody({ inputFields: [EMAIL, custom(secret)] }), 400, 'form_field_internal', 'body.inputFields[1].fieldRef'],
      [formBody({ inputFields: [EMAIL, custom(text), custom(text.toUpperCase())] }), 400, 'form_field_duplicate', 'body.inputFields[2].fieldRef'],
      [formBody({ inputFields: [{ ...EMAIL, inputControl: 'TEXTAREA' }] }), 400, 'form_input_control_invalid', 'body.inputFields[0].inputControl'],
      [formBody({ inputFields: [EMAIL, custom(text, { inputControl: 'CHECKBOX' })] }), 400, 'form_input_control_invalid'],
      [formBody({ inputFields: [EMAIL, { fieldRef: { type: 'BUILT_IN', builtInField: 'PHONE' }, isRequired: false }] }), 400, 'validation_failed', 'body.inputFields[1].fieldRef.builtInField'],
      [formBody({ inputFields: [EMAIL, custom('not-a-uuid')] }), 400, 'invalid_uuid', 'body.inputFields[1].fieldRef.fieldId'],
      [formBody({ inputFields: [EMAIL, { fieldRef: { type: 'PHONE' }, isRequired: false }] }), 400, 'validation_failed', 'body.inputFields[1].fieldRef.type'],
      [formBody({ inputFields: [] }), 400, 'validation_failed'],
      [formBody({ routePath: 'join' }), 400, 'form_route_not_allowed', 'body.routePath'],
      [formBody({ type: 'SLIDER', domain: 'pages.example.com' }), 400, 'form_route_not_allowed', 'body.domain'],
      [formBody({ type: 'PAGE', routePath: 'Join Us' }), 400, 'validation_failed'],
      [formBody({ type: 'PAGE', routePath: 'x'.repeat(65) }), 400, 'validation_failed'],
      [formBody({ type: 'PAGE', routePath: 'ok', domain: 'not a host' }), 400, 'validation_failed', 'body.domain'],
      [formBody({ topicIds: [UNKNOWN_ID] }), 404, 'topic_not_found', 'body.topicIds[0]'],
      [formBody({ topicIds: [closed] }), 400, 'topic_inactive', 'body.topicIds[0]'],
      [formBody({ topicIds: [closed, closed] }), 400, 'duplicate_ids'],
      [formBody({ senderProfileId: UNKNOWN_ID }), 404, 'sender_profile_not_found', 'body.senderProfileId'],
      [formBody({ senderProfileId: 'nope' }), 400, 'invalid_uuid'],
      [formBody({ confirmationTemplateName: 'no-such-template' }), 404, 'template_not_found', 'body.confirmationTemplateName'],
      [formBody({ confirmationTemplateName: 'Bad Name' }), 400, 'validation_failed'],
      [formBody({ allowedOrigins: ['https://shop.example.com/path'] }), 400, 'validation_failed', 'body.allowedOrigins[0]'],
      [formBody({ type: 'CAROUSEL' }), 400, 'validation_failed'],
      [formBody({ name: '   ' }), 400, 'validation_failed'],
      [formBody({ status: 'INACTIVE' }), 400, 'unknown_property'],
      [{ type: 'DEFAULT', inputFields: [EMAIL] }, 400, 'validation_failed'],
    ];
    for (const [body, status, errorId, path] of cases) {
      const res = await a.post('/forms', body);
      expect({ body, status: res.status, errorId: res.json?.errorId }).toEqual({ body, status, errorId });
      expectError(res, status, errorId);
      if (path) expect(pathsOf(res)).toContain(path);
    }
    // nothing of it was stored
    expect(expectStatus(await a.get('/forms'), 200).items.filter((f: { name: string }) => f.name === 'Newsletter')).toEqual([]);
  });

  it('every field the catalog marks required must be on the form, as required', async () => {
    const c = await env.account('forms-required');
    const company = await field(c, { label: 'Company', required: true });
    const res = await c.post('/forms', formBody());
    expectError(res, 400, 'form_required_field_missing');
    expect(res.json.details).toEqual([{ path: 'body.inputFields', problem: expect.stringContaining('required in signups') }]);
    expectError(await c.post('/forms', formBody({ inputFields: [EMAIL, custom(company)] })), 400, 'form_required_field_missing');
    await createForm(c, formBody({ inputFields: [EMAIL, custom(company, { isRequired: true })] }));
  });
});

describe('landing pages', () => {
  it('routePath is unique per domain across accounts; the default host may be named explicitly', async () => {
    const page = (routePath: string, extra: Record<string, unknown> = {}) => formBody({ type: 'PAGE', routePath, ...extra });
    const first = await createForm(a, page('spring'));
    expectError(await b.post('/forms', page('spring')), 409, 'route_path_taken');
    // naming the default host is the same host
    const sameHost = await b.post('/forms', page('spring', { domain: 'MAIL.forms.test' }));
    expectError(sameHost, 409, 'route_path_taken');
    expect(pathsOf(sameHost)).toEqual(['body.routePath']);
    const elsewhere = await createForm(b, page('spring', { domain: 'Pages.B-Shop.test' }));
    expect(elsewhere.domain).toBe('pages.b-shop.test');
    expect((await createForm(a, page('spring-2', { domain: 'mail.forms.test' }))).domain).toBeNull();
    // moving another form onto a taken path is refused too; a deleted form frees its path
    const other = await createForm(b, page('autumn'));
    expectError(await b.put(`/forms/${other.id}`, page('spring')), 409, 'route_path_taken');
    expect((await a.delete(`/forms/${first.id}`)).status).toBe(204);
    expect(expectStatus(await b.put(`/forms/${other.id}`, page('spring')), 200).routePath).toBe('spring');
  });

  it('concurrent requests for one routePath: exactly one wins (a unique index, not a read)', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).post('/forms', formBody({ type: 'PAGE', routePath: 'race', name: `racer ${i}` }))),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((r) => r.status === 409)) expectError(r, 409, 'route_path_taken');
  });

  it('DRAFT -> PUBLISHED <-> UNPUBLISHED, with publicUrl and lastPublishedAt; what cannot be published', async () => {
    const form = await createForm(a, formBody({ type: 'PAGE', routePath: 'summer' }));
    // unpublishing a draft changes nothing
    expect(overview(await a.post(`/forms/${form.id}/unpublish`))).toMatchObject({ publishedStatus: 'DRAFT', publicUrl: null });
    const published = overview(await a.post(`/forms/${form.id}/publish`));
    expect(published).toMatchObject({ publishedStatus: 'PUBLISHED', publicUrl: `${PUBLIC_BASE_URL}/public/pages/summer`, lastPublishedAt: expect.stringMatching(LOCAL_DATE_TIME) });
    expect(Math.abs(Date.parse(`${published.lastPublishedAt}Z`) - Date.now())).toBeLessThan(60_000);
    // publishing twice changes nothing
    expect(overview(await a.post(`/forms/${form.id}/publish`))).toEqual(published);
    expect(expectStatus(await a.get(`/forms/${form.id}`), 200)).toMatchObject({ publishedStatus: 'PUBLISHED', publicUrl: published.publicUrl });
    // a published page cannot lose its route; moving it is allowed
    expectError(await a.put(`/forms/${form.id}`, formBody({ type: 'PAGE' })), 409, 'landing_page_published');
    expectError(await a.put(`/forms/${form.id}`, formBody({ type: 'POPUP' })), 409, 'landing_page_published');
    const moved = expectStatus(await a.put(`/forms/${form.id}`, formBody({ type: 'PAGE', routePath: 'summer-2', domain: 'pages.a-shop.test' })), 200);
    expect(moved).toMatchObject({ publishedStatus: 'PUBLISHED', publicUrl: 'https://pages.a-shop.test/public/pages/summer-2', lastPublishedAt: published.lastPublishedAt });

    const unpublished = overview(await a.post(`/forms/${form.id}/unpublish`));
    expect(unpublished).toMatchObject({ publishedStatus: 'UNPUBLISHED', publicUrl: null, lastPublishedAt: published.lastPublishedAt });
    expect(overview(await a.post(`/forms/${form.id}/unpublish`)).publishedStatus).toBe('UNPUBLISHED');
    // unpublished, it may become another type
    expect(expectStatus(await a.put(`/forms/${form.id}`, formBody({ type: 'INLINE' })), 200)).toMatchObject({ type: 'INLINE', routePath: null, domain: null, publishedStatus: 'UNPUBLISHED' });
    const notPage = await a.post(`/forms/${form.id}/publish`);
    expectError(notPage, 409, 'form_not_publishable');
    expect(notPage.json.message).toContain('PAGE');
    expectStatus(await a.put(`/forms/${form.id}`, formBody({ type: 'PAGE' })), 200);
    const noRoute = await a.post(`/forms/${form.id}/publish`);
    expectError(noRoute, 409, 'form_not_publishable');
    expect(noRoute.json.message).toContain('routePath');
    expectStatus(await a.put(`/forms/${form.id}`, formBody({ type: 'PAGE', routePath: 'summer' })), 200);
    const again = overview(await a.post(`/forms/${form.id}/publish`));
    expect(again).toMatchObject({ publishedStatus: 'PUBLISHED', publicUrl: `${PUBLIC_BASE_URL}/public/pages/summer` });
    expect(again.lastPublishedAt >= published.lastPublishedAt).toBe(true);
  });
});

describe('activation and embedding', () => {
  it('deactivate hides the embedding (404 form_inactive), activate brings it back; both idempotent', async () => {
    const text = await field(a);
    const form = await createForm(a, formBody({ type: 'INLINE', inputFields: [EMAIL, custom(text, { label: 'City' })] }));
    const embedding = expectStatus(await a.get(`/forms/${form.id}/embedding`), 200);
    expect(schemaErrors('FormEmbedding', embedding)).toEqual([]);
    expect(embedding).toEqual({ id: form.id, type: 'INLINE', inputFields: form.inputFields });

    expect(overview(await a.post(`/forms/${form.id}/deactivate`)).status).toBe('INACTIVE');
    expect(overview(await a.post(`/forms/${form.id}/deactivate`)).status).toBe('INACTIVE');
    expectError(await a.get(`/forms/${form.id}/embedding`), 404, 'form_inactive');
    expect(expectStatus(await a.get(`/forms/${form.id}`), 200).status).toBe('INACTIVE');
    expect(overview(await a.post(`/forms/${form.id}/activate`)).status).toBe('ACTIVE');
    expect(overview(await a.post(`/forms/${form.id}/activate`)).status).toBe('ACTIVE');
    expectStatus(await a.get(`/forms/${form.id}/embedding`), 200);
  });
});

describe('field usages', () => {
  it('GET /fields/{id}/forms lists the forms; an ACTIVE form blocks archival, an INACTIVE one does not, and cannot be activated with it', async () => {
    const city = await field(a, { label: 'City' });
    const active = await createForm(a, formBody({ name: 'Active form', inputFields: [EMAIL, custom(city)] }));
    const inactive = await createForm(a, formBody({ name: 'Inactive form', inputFields: [EMAIL, custom(city)] }));
    overview(await a.post(`/forms/${inactive.id}/deactivate`));

    const forms = expectStatus(await a.get(`/fields/${city}/forms`), 200);
    expect(forms).toEqual([
      { id: active.id, name: 'Active form' },
      { id: inactive.id, name: 'Inactive form' },
    ]);
    const usage = expectStatus(await a.get(`/fields/${city}/usage`), 200);
    expect(usage.archiveBlocked).toBe(true);
    expect(usage.blockingUsages).toEqual([expect.objectContaining({ category: 'FORM', artifactId: active.id, artifactName: 'Active form', area: 'inputFields[1]' })]);
    expect(usage.warningUsages).toEqual([expect.objectContaining({ category: 'FORM', artifactId: inactive.id })]);

    const blocked = await a.post(`/fields/${city}/archive`);
    expectError(blocked, 409, 'field_archive_blocked');
    expect(JSON.stringify(blocked.json.details)).toContain('Active form');

    // Deactivated, the form no longer blocks archival; it cannot be activated with the archived field.
    overview(await a.post(`/forms/${active.id}/deactivate`));
    expect(expectStatus(await a.post(`/fields/${city}/archive`), 200).active).toBe(false);
    const refused = await a.post(`/forms/${active.id}/activate`);
    expectError(refused, 409, 'field_archived');
    expect(pathsOf(refused)).toEqual(['inputFields[1]']);
    // it may keep the field while INACTIVE (a PUT of the same inputs) but not add it to another form
    expectStatus(await a.put(`/forms/${active.id}`, formBody({ name: 'Active form', inputFields: [EMAIL, custom(city)] })), 200);
    expectStatus(await a.put(`/forms/${inactive.id}`, formBody({ inputFields: [EMAIL] })), 200);
    expectError(await a.put(`/forms/${inactive.id}`, formBody({ inputFields: [EMAIL, custom(city)] })), 409, 'field_archived');
    // dropping the field lets it be activated again
    expectStatus(await a.put(`/forms/${active.id}`, formBody({ name: 'Active form' })), 200);
    expect(overview(await a.post(`/forms/${active.id}/activate`)).status).toBe('ACTIVE');
    expect(expectStatus(await a.get(`/fields/${city}/forms`), 200)).toEqual([]);
  });
});

describe('sender profiles and templates a form names', () => {
  it('must exist, and cannot be deleted while a form names them (409 with the forms in details)', async () => {
    const profile = expectStatus(await a.post('/sender-profiles', { name: 'Signups', fromEmail: 'signup@example.com', fromName: 'Signups' }), 201);
    expectStatus(await a.post('/email-templates', { name: 'confirm-signup', subject: 'Confirm', html: '<p>Please confirm</p>' }), 201);
    const form = await createForm(a, formBody({ name: 'Confirming form', senderProfileId: profile.id.toUpperCase(), confirmationTemplateName: 'confirm-signup' }));
    expect(form).toMatchObject({ senderProfileId: profile.id, confirmationTemplateName: 'confirm-signup' });

    const profileInUse = await a.delete(`/sender-profiles/${profile.id}`);
    expectError(profileInUse, 409, 'sender_profile_in_use');
    expect(profileInUse.json.details).toEqual([{ path: `forms.${form.id}`, problem: expect.stringContaining('Confirming form') }]);
    const templateInUse = await a.delete('/email-templates/confirm-signup');
    expectError(templateInUse, 409, 'template_in_use');
    expect(templateInUse.json.details).toEqual([{ path: `forms.${form.id}`, problem: expect.stringContaining('Confirming form') }]);
    // another account's form of the same names blocks nothing here
    expectStatus(await a.put(`/forms/${form.id}`, formBody({ name: 'Confirming form' })), 200);
    expect((await a.delete('/email-templates/confirm-signup')).status).toBe(204);
    expect((await a.delete(`/sender-profiles/${profile.id}`)).status).toBe(204);
    expectError(await a.put(`/forms/${form.id}`, formBody({ senderProfileId: profile.id })), 404, 'sender_profile_not_found');
  });
});

describe('tenant isolation', () => {
  it("another account's forms, fields, topics, sender profiles and templates are unknown (404)", async () => {
    const bField = await field(b);
    const bTopic = await topic(b);
    const bProfile = expectStatus(await b.post('/sender-profiles', { name: 'B', fromEmail: 'b@example.com', fromName: 'B' }), 201);
    expectStatus(await b.post('/email-templates', { name: 'b-only', subject: 'B', html: '<p>B</p>' }), 201);
    const aForm = await createForm(a, formBody({ name: 'A private', type: 'PAGE', routePath: 'a-private' }));

    for (const res of [
      await b.get(`/forms/${aForm.id}`),
      await b.put(`/forms/${aForm.id}`, formBody()),
      await b.delete(`/forms/${aForm.id}`),
      await b.post(`/forms/${aForm.id}/activate`),
      await b.post(`/forms/${aForm.id}/deactivate`),
      await b.post(`/forms/${aForm.id}/publish`),
      await b.post(`/forms/${aForm.id}/unpublish`),
      await b.get(`/forms/${aForm.id}/embedding`),
    ])
      expectError(res, 404, 'form_not_found');
    expect(expectStatus(await b.get('/forms'), 200).items.map((f: { id: string }) => f.id)).not.toContain(aForm.id);
    expect(expectStatus(await a.get(`/forms/${aForm.id}`), 200)).toMatchObject({ name: 'A private', status: 'ACTIVE', publishedStatus: 'DRAFT' });

    expectError(await a.post('/forms', formBody({ inputFields: [EMAIL, custom(bField)] })), 404, 'field_not_found');
    expectError(await a.post('/forms', formBody({ topicIds: [bTopic] })), 404, 'topic_not_found');
    expectError(await a.post('/forms', formBody({ senderProfileId: bProfile.id })), 404, 'sender_profile_not_found');
    expectError(await a.post('/forms', formBody({ confirmationTemplateName: 'b-only' })), 404, 'template_not_found');
    expectError(await a.get(`/fields/${bField}/forms`), 404, 'field_not_found');
    // B's profile is not blocked by A's forms, and A's form does not show up in B's field usages
    const bForm = await createForm(b, formBody({ inputFields: [EMAIL, custom(bField)], senderProfileId: bProfile.id }));
    expect(expectStatus(await b.get(`/fields/${bField}/forms`), 200)).toEqual([{ id: bForm.id, name: 'Newsletter' }]);
  });
});

describe('fuzzed bodies', () => {
  it('one bad member in an otherwise valid body of any shape: its status, errorId and member; valid bodies saved', async () => {
    let s = 1234567;
    const random = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const text = await field(a);
    const joined = await topic(a);
    const target = await createForm(a, formBody({ name: 'Fuzz target' }));
    // Valid values of each member (undefined: omitted); landing pages (PAGE) have tests of their own.
    const VALID: Record<string, unknown[]> = {
      name: ['Newsletter', 'Zoë <b>&</b> 中文', 'x'.repeat(200)],
      type: ['DEFAULT', 'SLIDER', 'INLINE', 'POPUP'],
      inputFields: [[EMAIL], [EMAIL, FIRST_NAME], [custom(text, { label: 'Nick', placeholder: null }), { ...EMAIL, inputControl: 'EMAIL_INPUT', label: null }]],
      topicIds: [undefined, [], [joined]],
      doubleOptIn: [undefined, null, true, false],
      senderProfileId: [undefined, null],
      confirmationTemplateName: [undefined, null],
      allowedOrigins: [undefined, [], ['https://shop.example.com', 'http://localhost:8080']],
    };
    const wrongTypes = (member: string, values: unknown[]): Array<[string, unknown, number, string]> => values.map((v) => [member, v, 400, 'validation_failed']);
    // [member, value (undefined: removed), status, errorId]
    const BAD: Array<[string, unknown, number, string]> = [
      ...wrongTypes('name', [undefined, null, 5, true, [], {}, '', '   ', 'x'.repeat(201)]),
      ...wrongTypes('type', [undefined, null, 'CAROUSEL', 'page', 1]),
      ...wrongTypes('inputFields', [undefined, null, [], 'x', {}, [null], [EMAIL, { ...FIRST_NAME, isRequired: 'yes' }], [{ ...EMAIL, label: 'x'.repeat(201) }], Array.from({ length: 51 }, () => EMAIL)]),
      ['inputFields', [custom(text)], 400, 'form_email_field_required'],
      ['inputFields', [{ ...EMAIL, isRequired: false }], 400, 'form_email_field_required'],
      ['inputFields', [EMAIL, custom(UNKNOWN_ID)], 404, 'field_not_found'],
      ['inputFields', [EMAIL, custom('x')], 400, 'invalid_uuid'],
      ['inputFields', [EMAIL, custom(text), custom(text)], 400, 'form_field_duplicate'],
      ['inputFields', [{ ...EMAIL, inputControl: 'TEXTAREA' }], 400, 'form_input_control_invalid'],
      ['inputFields', [{ ...EMAIL, inputControl: 'NOPE' }], 400, 'validation_failed'],
      ['inputFields', [EMAIL, { fieldRef: { type: 'BUILT_IN', builtInField: 'PHONE' }, isRequired: false }], 400, 'validation_failed'],
      ['inputFields', [EMAIL, { fieldRef: { type: 'CUSTOM', fieldId: text, builtInField: 'EMAIL' }, isRequired: false }], 400, 'unknown_property'],
      ['inputFields', [{ ...EMAIL, colour: 'red' }], 400, 'unknown_property'],
      ['topicIds', [UNKNOWN_ID], 404, 'topic_not_found'],
      ['topicIds', ['x'], 400, 'invalid_uuid'],
      ['topicIds', [joined, joined], 400, 'duplicate_ids'],
      ...wrongTypes('topicIds', ['x', null, {}]),
      ...wrongTypes('doubleOptIn', ['yes', 1, []]),
      ['senderProfileId', UNKNOWN_ID, 404, 'sender_profile_not_found'],
      ['senderProfileId', 'nope', 400, 'invalid_uuid'],
      ['confirmationTemplateName', 'no-such-template', 404, 'template_not_found'],
      ...wrongTypes('confirmationTemplateName', ['Bad Name', 5]),
      ['routePath', 'join', 400, 'form_route_not_allowed'],
      ['domain', 'pages.example.com', 400, 'form_route_not_allowed'],
      ...wrongTypes('allowedOrigins', ['https://shop.example.com', ['https://shop.example.com/path'], [''], Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`)]),
      ...['status', 'id', 'active', 'published', '__proto__'].map((k): [string, unknown, number, string] => [k, 'x', 400, 'unknown_property']),
    ];
    const failures: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = {};
      for (const [member, values] of Object.entries(VALID)) {
        const v = pick(values);
        if (v !== undefined) body[member] = v;
      }
      const [member, value, status, errorId] = i % 10 === 9 ? [] : pick(BAD);
      if (member !== undefined) {
        if (value === undefined) delete body[member];
        else Object.defineProperty(body, member, { value, enumerable: true, configurable: true, writable: true }); // "__proto__" as a member
      }
      const put = i % 3 === 0;
      const res = put ? await a.put(`/forms/${target.id}`, body) : await a.post('/forms', body);
      const want = status ? { status, errorId } : { status: put ? 200 : 201, errorId: undefined };
      if (res.status !== want.status || res.json?.errorId !== want.errorId) failures.push(`#${i} ${put ? 'PUT' : 'POST'} ${member ?? 'valid'}=${JSON.stringify(value)?.slice(0, 80)}: ${res.status} ${res.text.slice(0, 200)}`);
      else if (status) expect(schemaErrors('ErrorMessageDto', res.json)).toEqual([]);
      else expect(schemaErrors('Form', res.json)).toEqual([]);
      seen.add(errorId ?? 'saved');
    }
    expect(failures).toEqual([]);
    expect(seen.size).toBeGreaterThanOrEqual(10);
    expectStatus(await a.get(`/forms/${target.id}`), 200);
  });
});
