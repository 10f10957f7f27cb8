// The rules of a form body (domain/form-request.ts), pure: every errorId, the values a valid body
// becomes (resolved against the catalog), and the landing page transitions' preconditions.
import { DomainError } from '@mailer/kit';
import { publicUrlOf, pageDomainOfHost, type Form } from '../src/domain/form';
import { activationProblem, publishProblem, resolveFormRequest, type Catalog, type CatalogField, type FormRequest, type ResolveContext } from '../src/domain/form-request';
import { formFixture } from './support/form-fixture';

const PLAN = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const NOTES = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';
const OLD = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5d';
const SECRET = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5e';
const TOPIC = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60';
const CLOSED = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a61';
const BASE = 'https://mail.example.com';

const field = (over: Partial<CatalogField> & Pick<CatalogField, 'ref' | 'personalizationTagName' | 'fieldType'>): CatalogField => ({
  label: over.personalizationTagName,
  required: false,
  internal: false,
  active: true,
  options: [],
  ...over,
});

const catalog: Catalog = {
  fields: [
    field({ ref: { type: 'BUILT_IN', builtInField: 'EMAIL' }, personalizationTagName: 'email', label: 'Email', fieldType: 'EMAIL', required: true }),
    field({ ref: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, personalizationTagName: 'first_name', label: 'First name', fieldType: 'TEXT' }),
    field({
      ref: { type: 'CUSTOM', fieldId: PLAN },
      personalizationTagName: 'plan',
      label: 'Plan',
      fieldType: 'SINGLE_CHOICE',
      options: [
        { label: 'Pro', position: 2, active: true },
        { label: 'Legacy', position: 0, active: false },
        { label: 'Free', position: 1, active: true },
      ],
    }),
    field({ ref: { type: 'CUSTOM', fieldId: NOTES }, personalizationTagName: 'notes', fieldType: 'LONG_TEXT' }),
    field({ ref: { type: 'CUSTOM', fieldId: OLD }, personalizationTagName: 'old', fieldType: 'TEXT', active: false }),
    field({ ref: { type: 'CUSTOM', fieldId: SECRET }, personalizationTagName: 'secret', fieldType: 'TEXT', internal: true }),
  ],
  topics: [
    { id: TOPIC, active: true },
    { id: CLOSED, active: false },
  ],
};

const email = { fieldRef: { type: 'BUILT_IN' as const, builtInField: 'EMAIL' as const }, label: null, placeholder: null, isRequired: true, inputControl: null };
const custom = (fieldId: string, over: Partial<FormRequest['inputFields'][0]> = {}) => ({
  fieldRef: { type: 'CUSTOM' as const, fieldId },
  label: null,
  placeholder: null,
  isRequired: false,
  inputControl: null,
  ...over,
});
const request = (over: Partial<FormRequest> = {}): FormRequest => ({
  name: ' Newsletter ',
  type: 'DEFAULT',
  inputFields: [email],
  topicIds: [],
  doubleOptIn: null,
  senderProfileId: null,
  confirmationTemplateName: null,
  routePath: null,
  domain: null,
  allowedOrigins: [],
  ...over,
});
const ctx = (over: Partial<ResolveContext> = {}): ResolveContext => ({ catalog, publicBaseUrl: BASE, previous: null, ...over });

function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('no error thrown');
}
const errorIdOf = (req: FormRequest, c: ResolveContext = ctx()) => errorOf(() => resolveFormRequest(req, c)).errorId;

describe('resolveFormRequest', () => {
  it('resolves inputs against the catalog: type, tag name, label default, active option labels in order, default control', () => {
    const values = resolveFormRequest(
      request({
        inputFields: [email, custom(PLAN.toUpperCase(), { label: ' Your plan ', placeholder: 'pick one' }), custom(NOTES, { inputControl: 'TEXT_INPUT' })],
        topicIds: [TOPIC.toUpperCase()],
        senderProfileId: 'ABC',
      }),
      ctx(),
    );
    expect(values.name).toBe('Newsletter');
    expect(values.doubleOptIn).toBe(true);
    expect(values.topicIds).toEqual([TOPIC]);
    expect(values.senderProfileId).toBe('abc');
    expect(values.inputFields).toEqual([
      { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, fieldId: 'EMAIL', personalizationTagName: 'email', label: 'Email', placeholder: '', isRequired: true, position: 0, fieldType: 'EMAIL', inputControl: 'EMAIL_INPUT', optionValues: [] },
      { fieldRef: { type: 'CUSTOM', fieldId: PLAN }, fieldId: PLAN, personalizationTagName: 'plan', label: 'Your plan', placeholder: 'pick one', isRequired: false, position: 1, fieldType: 'SINGLE_CHOICE', inputControl: 'SELECT', optionValues: ['Free', 'Pro'] },
      { fieldRef: { type: 'CUSTOM', fieldId: NOTES }, fieldId: NOTES, personalizationTagName: 'notes', label: 'notes', placeholder: '', isRequired: false, position: 2, fieldType: 'LONG_TEXT', inputControl: 'TEXT_INPUT', optionValues: [] },
    ]);
  });

  it('EMAIL must be an input and required', () => {
    expect(errorIdOf(request({ inputFields: [custom(NOTES)] }))).toBe('form_email_field_required');
    expect(errorIdOf(request({ inputFields: [{ ...email, isRequired: false }] }))).toBe('form_email_field_required');
  });

  it('a catalog field required in signups must be on the form, as required', () => {
    const strict: Catalog = { ...catalog, fields: catalog.fields.map((f) => (f.personalizationTagName === 'notes' ? { ...f, required: true } : f)) };
    const err = errorOf(() => resolveFormRequest(request(), ctx({ catalog: strict })));
    expect(err.errorId).toBe('form_required_field_missing');
    expect(err.details?.[0].problem).toContain('notes');
    expect(errorIdOf(request({ inputFields: [email, custom(NOTES)] }), ctx({ catalog: strict }))).toBe('form_required_field_missing');
    expect(resolveFormRequest(request({ inputFields: [email, custom(NOTES, { isRequired: true })] }), ctx({ catalog: strict })).inputFields).toHaveLength(2);
  });

  it('unknown fields are 404 field_not_found, archived ones 409 field_archived, internal ones form_field_internal, twice form_field_duplicate', () => {
    const unknown = errorOf(() => resolveFormRequest(request({ inputFields: [email, custom('0190a1b2-0000-7000-8000-000000000000')] }), ctx()));
    expect([unknown.errorId, unknown.code, unknown.details?.[0].path]).toEqual(['field_not_found', 5, 'body.inputFields[1].fieldRef']);
    const archived = errorOf(() => resolveFormRequest(request({ inputFields: [email, custom(OLD)] }), ctx()));
    expect([archived.errorId, archived.code]).toEqual(['field_archived', 9]);
    expect(errorIdOf(request({ inputFields: [email, custom(SECRET)] }))).toBe('form_field_internal');
    expect(errorIdOf(request({ inputFields: [email, custom(NOTES), custom(NOTES.toUpperCase())] }))).toBe('form_field_duplicate');
    expect(errorIdOf(request({ inputFields: [email, email] }))).toBe('form_field_duplicate');
  });

  it('an archived field an INACTIVE form already collects may stay on it; activation then refuses it', () => {
    const stored: Form = formFixture('f', 'acc', { status: 'INACTIVE', inputFields: resolveFormRequest(request({ inputFields: [email] }), ctx()).inputFields });
    stored.inputFields.push({ ...stored.inputFields[0], fieldRef: { type: 'CUSTOM', fieldId: OLD }, fieldId: OLD, personalizationTagName: 'old', position: 1, fieldType: 'TEXT', inputControl: 'TEXT_INPUT' });
    expect(resolveFormRequest(request({ inputFields: [email, custom(OLD)] }), ctx({ previous: stored })).inputFields).toHaveLength(2);
    expect(errorIdOf(request({ inputFields: [email, custom(OLD)] }), ctx({ previous: { ...stored, status: 'ACTIVE' } }))).toBe('field_archived');
    expect(activationProblem(stored, catalog)?.errorId).toBe('field_archived');
    expect(activationProblem({ ...stored, inputFields: stored.inputFields.slice(0, 1) }, catalog)).toBeNull();
  });

  it('inputControl must fit the field type', () => {
    const err = errorOf(() => resolveFormRequest(request({ inputFields: [{ ...email, inputControl: 'TEXTAREA' }] }), ctx()));
    expect(err.errorId).toBe('form_input_control_invalid');
    expect(err.message).toContain('EMAIL_INPUT');
    expect(errorIdOf(request({ inputFields: [email, custom(PLAN, { inputControl: 'CHECKBOX_GROUP' })] }))).toBe('form_input_control_invalid');
    expect(resolveFormRequest(request({ inputFields: [email, custom(PLAN, { inputControl: 'RADIO_GROUP' })] }), ctx()).inputFields[1].inputControl).toBe('RADIO_GROUP');
  });

  it('topics must exist (404), be active (400), appear once', () => {
    expect(errorOf(() => resolveFormRequest(request({ topicIds: ['0190a1b2-0000-7000-8000-000000000001'] }), ctx())).code).toBe(5);
    expect(errorIdOf(request({ topicIds: ['0190a1b2-0000-7000-8000-000000000001'] }))).toBe('topic_not_found');
    expect(errorIdOf(request({ topicIds: [CLOSED] }))).toBe('topic_inactive');
    expect(errorIdOf(request({ topicIds: [TOPIC, TOPIC.toUpperCase()] }))).toBe('duplicate_ids');
  });

  it('routePath and domain belong to PAGE forms; routePath has a pattern; domain is a host, the default host stored as null', () => {
    expect(errorIdOf(request({ routePath: 'join' }))).toBe('form_route_not_allowed');
    expect(errorIdOf(request({ type: 'POPUP', domain: 'pages.example.com' }))).toBe('form_route_not_allowed');
    expect(errorIdOf(request({ type: 'PAGE', routePath: 'Join' }))).toBe('validation_failed');
    expect(errorIdOf(request({ type: 'PAGE', routePath: 'x'.repeat(65) }))).toBe('validation_failed');
    for (const bad of ['http://pages.example.com', 'pages', 'pages.example.com/x', '-a.example.com', '1.2.3.4', 'a..b', 'a.b:99999'])
      expect([bad, errorIdOf(request({ type: 'PAGE', routePath: 'join', domain: bad }))]).toEqual([bad, 'validation_failed']);
    const page = resolveFormRequest(request({ type: 'PAGE', routePath: 'join-us-2', domain: ' Pages.Example.COM ' }), ctx());
    expect([page.routePath, page.domain]).toEqual(['join-us-2', 'pages.example.com']);
    expect(resolveFormRequest(request({ type: 'PAGE', routePath: 'join', domain: 'mail.example.com' }), ctx()).domain).toBeNull();
  });

  it('allowedOrigins are origins, canonical and once', () => {
    expect(resolveFormRequest(request({ allowedOrigins: ['https://Shop.Example.com', 'https://shop.example.com/', 'http://localhost:3000'] }), ctx()).allowedOrigins).toEqual([
      'https://shop.example.com',
      'http://localhost:3000',
    ]);
    for (const bad of ['shop.example.com', 'https://shop.example.com/path', 'ftp://shop.example.com', 'https://u:p@shop.example.com', 'https://shop.example.com?x=1', '*'])
      expect([bad, errorIdOf(request({ allowedOrigins: [bad] }))]).toEqual([bad, 'validation_failed']);
  });

  it('blank names, over-long labels and control characters are validation_failed', () => {
    expect(errorIdOf(request({ name: '   ' }))).toBe('validation_failed');
    expect(errorIdOf(request({ inputFields: [{ ...email, label: 'x'.repeat(201) }] }))).toBe('validation_failed');
    expect(errorIdOf(request({ inputFields: [{ ...email, placeholder: 'a\u0000b' }] }))).toBe('validation_failed');
    expect(errorIdOf(request({ inputFields: [] }))).toBe('validation_failed');
  });

  it('a PUBLISHED page cannot lose its route by a PUT', () => {
    const published = formFixture('f', 'acc', { type: 'PAGE', routePath: 'join', landingPageStatus: 'PUBLISHED' });
    expect(errorIdOf(request({ type: 'DEFAULT' }), ctx({ previous: published }))).toBe('landing_page_published');
    expect(errorIdOf(request({ type: 'PAGE' }), ctx({ previous: published }))).toBe('landing_page_published');
    expect(resolveFormRequest(request({ type: 'PAGE', routePath: 'moved' }), ctx({ previous: published })).routePath).toBe('moved');
    expect(resolveFormRequest(request({ type: 'DEFAULT' }), ctx({ previous: { ...published, landingPageStatus: 'UNPUBLISHED' } })).type).toBe('DEFAULT');
  });
});

describe('landing pages', () => {
  it('only PAGE forms with a routePath can be published', () => {
    expect(publishProblem(formFixture('f', 'acc'))?.errorId).toBe('form_not_publishable');
    expect(publishProblem(formFixture('f', 'acc', { type: 'PAGE' }))?.message).toContain('routePath');
    expect(publishProblem(formFixture('f', 'acc', { type: 'PAGE', routePath: 'join' }))).toBeNull();
  });

  it('publicUrl while PUBLISHED: under PUBLIC_BASE_URL for the default host, https://<domain> for a custom one', () => {
    const page = formFixture('f', 'acc', { type: 'PAGE', routePath: 'join', landingPageStatus: 'PUBLISHED' });
    expect(publicUrlOf(page, `${BASE}/`)).toBe(`${BASE}/public/pages/join`);
    expect(publicUrlOf({ ...page, domain: 'pages.example.org' }, BASE)).toBe('https://pages.example.org/public/pages/join');
    expect(publicUrlOf({ ...page, landingPageStatus: 'UNPUBLISHED' }, BASE)).toBeNull();
    expect(pageDomainOfHost('MAIL.example.com', BASE)).toBeNull();
    expect(pageDomainOfHost('pages.example.org', BASE)).toBe('pages.example.org');
  });
});
