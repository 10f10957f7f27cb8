// The signup form as HTML: every input control renders as the reader's browser needs it (label,
// placeholder, required, options, the reader's values kept, errors marked), customer texts are
// text and never markup, and a browser's post reads back into the JSON submission's shape.
import { selectAll, selectOne } from 'css-select';
import { parseDocument } from 'htmlparser2';
import { getAttributeValue, textContent, type Element } from 'domutils';
import { fieldErrorsOf, postedSubmission, renderFormHtml, thankYouPage, type PageField, type PageForm } from '../src/http/form-html';

const field = (tag: string, inputControl: PageField['inputControl'], extra: Partial<PageField> = {}): PageField => ({
  personalizationTagName: tag,
  label: `Label ${tag}`,
  placeholder: '',
  isRequired: false,
  position: 0,
  inputControl,
  optionValues: [],
  ...extra,
});

const everyControl: PageForm = {
  id: '0190a0b0-0000-7000-8000-000000000001',
  name: 'Join us',
  consentText: 'I agree to receive the newsletter.',
  inputFields: [
    field('email', 'EMAIL_INPUT', { isRequired: true, position: 0, placeholder: 'you@example.com' }),
    field('first_name', 'TEXT_INPUT', { position: 1, placeholder: 'Ada' }),
    field('about', 'TEXTAREA', { position: 2 }),
    field('age', 'NUMBER_INPUT', { position: 3 }),
    field('birthday', 'DATE_INPUT', { position: 4 }),
    field('vip', 'CHECKBOX', { position: 5 }),
    field('country', 'SELECT', { position: 6, isRequired: true, optionValues: ['Germany', 'France'] }),
    field('size', 'RADIO_GROUP', { position: 7, isRequired: true, optionValues: ['S', 'M', 'L'] }),
    field('hobbies', 'CHECKBOX_GROUP', { position: 8, optionValues: ['Chess', 'Golf'] }),
    field('langs', 'SELECT_MULTIPLE', { position: 9, optionValues: ['de', 'fr', 'en'] }),
  ],
};

const parse = (html: string) => parseDocument(html);
const one = (doc: ReturnType<typeof parse>, selector: string): Element => {
  const el = selectOne(selector, doc);
  if (!el) throw new Error(`nothing matches ${selector}`);
  return el;
};
const attr = (el: Element, name: string) => getAttributeValue(el, name);
// htmlparser2 leaves a textarea's character references as written; a browser decodes them.
const CHARS: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' };
const textareaText = (el: Element) => textContent(el).replace(/&(lt|gt|quot|#39|amp);/g, (ref) => CHARS[ref]);
const has = (el: Element, name: string) => name in el.attribs;

test('every input control renders with its label, placeholder, required flag and options', () => {
  const doc = parse(renderFormHtml(everyControl));
  const form = one(doc, 'form');
  expect(attr(form, 'method')).toBe('post');
  expect(attr(form, 'action')).toBe(`/public/forms/${everyControl.id}/submissions`);
  expect(textContent(one(doc, 'h1'))).toBe('Join us');

  const email = one(doc, 'input[name="values[email]"]');
  expect([attr(email, 'type'), attr(email, 'placeholder'), has(email, 'required')]).toEqual(['email', 'you@example.com', true]);
  expect(textContent(one(doc, `label[for="${attr(email, 'id')}"]`))).toContain('Label email');

  const text = one(doc, 'input[name="values[first_name]"]');
  expect([attr(text, 'type'), attr(text, 'placeholder'), has(text, 'required')]).toEqual(['text', 'Ada', false]);
  expect(one(doc, 'textarea[name="values[about]"]')).toBeTruthy();
  expect(attr(one(doc, 'input[name="values[age]"]'), 'type')).toBe('number');
  expect(attr(one(doc, 'input[name="values[birthday]"]'), 'type')).toBe('date');
  const vip = one(doc, 'input[name="values[vip]"]');
  expect([attr(vip, 'type'), attr(vip, 'value')]).toEqual(['checkbox', 'true']);

  const country = one(doc, 'select[name="values[country]"]');
  expect(has(country, 'required')).toBe(true);
  expect(has(country, 'multiple')).toBe(false);
  // An empty first choice, so a required select is not answered by default.
  expect(selectAll('option', country).map((o) => attr(o, 'value'))).toEqual(['', 'Germany', 'France']);

  const radios = selectAll('input[name="values[size]"]', doc);
  expect(radios.map((r) => [attr(r, 'type'), attr(r, 'value'), has(r, 'required')])).toEqual([
    ['radio', 'S', true],
    ['radio', 'M', true],
    ['radio', 'L', true],
  ]);
  expect(textContent(one(doc, 'fieldset#f-size legend'))).toContain('Label size');

  expect(selectAll('input[name="values[hobbies]"]', doc).map((c) => [attr(c, 'type'), attr(c, 'value')])).toEqual([
    ['checkbox', 'Chess'],
    ['checkbox', 'Golf'],
  ]);
  const langs = one(doc, 'select[name="values[langs]"]');
  expect(has(langs, 'multiple')).toBe(true);
  expect(selectAll('option', langs).map((o) => attr(o, 'value'))).toEqual(['de', 'fr', 'en']);

  const consent = one(doc, 'input[name="consent[text]"]');
  expect([attr(consent, 'type'), attr(consent, 'value'), has(consent, 'required')]).toEqual(['checkbox', everyControl.consentText, true]);
  expect(textContent(one(doc, 'button[type="submit"]'))).toBe('Subscribe');
});

test('inputs follow their position, not the order of the record', () => {
  const form: PageForm = { ...everyControl, consentText: null, inputFields: [field('b', 'TEXT_INPUT', { position: 2 }), field('a', 'EMAIL_INPUT', { position: 1 })] };
  const doc = parse(renderFormHtml(form));
  expect(selectAll('form input:not([name=website])', doc).map((i) => attr(i, 'name'))).toEqual(['values[a]', 'values[b]']);
  expect(selectOne('input[name="consent[text]"]', doc)).toBeNull();
});

test('the honeypot is off-screen, out of the tab order, and tells a person to leave it empty', () => {
  const doc = parse(renderFormHtml(everyControl));
  const hp = one(doc, 'input[name="website"]');
  expect(attr(hp, 'tabindex')).toBe('-1');
  expect(attr(hp, 'value')).toBe('');
  const wrapper = one(doc, 'div.hp');
  expect(selectOne('input[name="website"]', wrapper)).toBe(hp);
  expect(textContent(one(doc, 'label[for="f-website"]'))).toBe('Leave this field empty');
});

test('the reader values are kept and the refused fields are marked', () => {
  const html = renderFormHtml(everyControl, {
    values: { email: 'not-an-address', first_name: 'Ada', about: 'Line\n"two"', age: 42, vip: true, country: 'France', size: 'M', hobbies: ['Golf'], langs: ['de', 'en'] },
    errors: { email: 'must be a valid email address', hobbies: 'Please fill in this field.' },
    consentGiven: true,
  });
  const doc = parse(html);
  const email = one(doc, 'input[name="values[email]"]');
  expect(attr(email, 'value')).toBe('not-an-address');
  expect(attr(email, 'aria-invalid')).toBe('true');
  expect(textContent(one(doc, `#${attr(email, 'aria-describedby')}`))).toBe('must be a valid email address');
  expect(textContent(one(doc, 'p[role=alert]'))).toMatch(/correct the marked fields/);
  expect(attr(one(doc, 'input[name="values[first_name]"]'), 'aria-invalid')).toBeUndefined();
  expect(attr(one(doc, 'input[name="values[first_name]"]'), 'value')).toBe('Ada');
  expect(textareaText(one(doc, 'textarea[name="values[about]"]'))).toBe('Line\n"two"');
  expect(attr(one(doc, 'input[name="values[age]"]'), 'value')).toBe('42');
  expect(has(one(doc, 'input[name="values[vip]"]'), 'checked')).toBe(true);
  expect(selectAll('select[name="values[country]"] option[selected]', doc).map((o) => attr(o, 'value'))).toEqual(['France']);
  expect(selectAll('input[name="values[size]"][checked]', doc).map((o) => attr(o, 'value'))).toEqual(['M']);
  expect(selectAll('input[name="values[hobbies]"][checked]', doc).map((o) => attr(o, 'value'))).toEqual(['Golf']);
  expect(textContent(one(doc, 'fieldset#f-hobbies .error'))).toBe('Please fill in this field.');
  expect(selectAll('select[name="values[langs]"] option[selected]', doc).map((o) => attr(o, 'value'))).toEqual(['de', 'en']);
  expect(has(one(doc, 'input[name="consent[text]"]'), 'checked')).toBe(true);
});

test('a page without errors has no error marks', () => {
  const doc = parse(renderFormHtml(everyControl, { values: { email: 'a@example.com' } }));
  expect(selectAll('.error, [aria-invalid]', doc)).toHaveLength(0);
});

describe('customer texts are text, never markup', () => {
  const SCRIPT = '<script>window.pwned=1</script>';
  const IMG = '<img src=x onerror="window.pwned=1">';
  const QUOTE = `" autofocus onfocus="window.pwned=1`;
  const hostile: PageForm = {
    id: 'f1',
    name: `${SCRIPT}${IMG}`,
    consentText: `${SCRIPT}${QUOTE}`,
    inputFields: [
      field('email', 'EMAIL_INPUT', { label: SCRIPT, placeholder: QUOTE, isRequired: true }),
      field('a', 'TEXT_INPUT', { label: IMG, placeholder: SCRIPT, position: 1 }),
      field('b', 'TEXTAREA', { label: QUOTE, placeholder: IMG, position: 2 }),
      field('c', 'SELECT', { label: SCRIPT, placeholder: SCRIPT, optionValues: [SCRIPT, QUOTE], position: 3 }),
      field('d', 'RADIO_GROUP', { label: IMG, optionValues: [IMG, QUOTE], position: 4 }),
      field('e', 'CHECKBOX_GROUP', { label: SCRIPT, optionValues: [SCRIPT], position: 5 }),
      field('f', 'SELECT_MULTIPLE', { label: QUOTE, optionValues: [IMG], position: 6 }),
      field('g', 'CHECKBOX', { label: SCRIPT, position: 7 }),
      field('h', 'NUMBER_INPUT', { label: IMG, placeholder: QUOTE, position: 8 }),
      field('i', 'DATE_INPUT', { label: SCRIPT, position: 9 }),
    ],
  };
  const states = {
    'a fresh page': {},
    'a page with the reader values and errors': {
      values: { email: SCRIPT, a: IMG, b: `</textarea>${SCRIPT}`, c: SCRIPT, d: QUOTE, e: [SCRIPT], f: [IMG] },
      errors: { email: SCRIPT, b: IMG, consent: QUOTE },
    },
  };

  test.each(Object.entries(states))('%s', (_name, state) => {
    const html = renderFormHtml(hostile, state);
    const doc = parse(html);
    // No element but the page's own: no script, no image, no attribute an input did not get from us.
    expect(selectAll('script, img', doc)).toHaveLength(0);
    expect(selectAll('[onerror], [onfocus], [autofocus]', doc)).toHaveLength(0);
    expect(html).not.toMatch(/<script|<img|<\/textarea>[^\n]*<script/i);
    // The texts arrive as the reader should read them.
    expect(textContent(one(doc, 'h1'))).toBe(hostile.name);
    expect(textContent(one(doc, 'title'))).toBe(hostile.name);
    expect(textContent(one(doc, 'label[for="f-email"]'))).toContain(SCRIPT);
    expect(attr(one(doc, 'input[name="values[email]"]'), 'placeholder')).toBe(QUOTE);
    expect(attr(one(doc, 'input[name="values[a]"]'), 'placeholder')).toBe(SCRIPT);
    expect(textContent(one(doc, 'label[for="f-a"]'))).toContain(IMG);
    expect(selectAll('select[name="values[c]"] option', doc).map((o) => [attr(o, 'value'), textContent(o)])).toEqual([
      ['', SCRIPT],
      [SCRIPT, SCRIPT],
      [QUOTE, QUOTE],
    ]);
    expect(selectAll('input[name="values[d]"]', doc).map((o) => attr(o, 'value'))).toEqual([IMG, QUOTE]);
    expect(textContent(one(doc, 'fieldset#f-d legend'))).toContain(IMG);
    expect(attr(one(doc, 'input[name="consent[text]"]'), 'value')).toBe(hostile.consentText);
    expect(textContent(one(doc, 'input[name="consent[text]"]').parent as Element)).toContain(hostile.consentText);
  });

  test('the kept values and error messages are text too', () => {
    const doc = parse(renderFormHtml(hostile, states['a page with the reader values and errors']));
    expect(attr(one(doc, 'input[name="values[email]"]'), 'value')).toBe(SCRIPT);
    expect(textContent(one(doc, '#e-email'))).toBe(SCRIPT);
    expect(textareaText(one(doc, 'textarea[name="values[b]"]'))).toBe(`</textarea>${SCRIPT}`);
    expect(textContent(one(doc, '#e-consent'))).toBe(QUOTE);
  });

  test('the thank-you page escapes the form name', () => {
    const doc = parse(thankYouPage(hostile));
    expect(selectAll('script, img', doc)).toHaveLength(0);
    expect(textContent(one(doc, 'title'))).toBe(hostile.name);
  });
});

test('the thank-you page says the same whatever happened, and tells a double opt-in reader to confirm', () => {
  const double = parse(thankYouPage({ name: 'Join', doubleOptIn: true }));
  expect(textContent(one(double, 'h1'))).toBe('Thank you');
  expect(textContent(one(double, 'p'))).toMatch(/confirm your subscription/);
  expect(textContent(one(parse(thankYouPage({ name: 'Join', doubleOptIn: false })), 'p'))).toBe('Your submission was received.');
});

test("a browser's post reads back into the JSON submission's shape", () => {
  const posted = new URLSearchParams(
    'values[email]=a%40example.com&values[first_name]=&values[about]=hi&values[age]=42&values[vip]=true&values[country]=France' +
      '&values[size]=M&values[hobbies]=Chess&values[hobbies]=Golf&values[unknown]=x&consent[text]=I+agree+to+receive+the+newsletter.&website=',
  );
  const fields = new Map<string, string[]>();
  for (const [k, v] of posted) fields.set(k, [...(fields.get(k) ?? []), v]);
  expect(postedSubmission(everyControl, fields)).toEqual({
    values: { email: 'a@example.com', about: 'hi', age: '42', vip: true, country: 'France', size: 'M', hobbies: ['Chess', 'Golf'] },
    consent: { text: 'I agree to receive the newsletter.' },
    honeypot: '',
  });
  const bot = postedSubmission(everyControl, new Map([['website', ['http://spam.example']]]));
  expect(bot).toEqual({ values: { vip: false }, consent: null, honeypot: 'http://spam.example' });
});

test('refusal details become per-field messages', () => {
  expect(
    fieldErrorsOf([
      { path: 'values.email', problem: 'must be a valid email address' },
      { path: 'values[country]', problem: 'required' },
      { path: 'consent.text', problem: 'required' },
      { path: 'values', problem: 'too many values' },
    ]),
  ).toEqual({ email: 'must be a valid email address', country: 'Please fill in this field.', consent: 'Please fill in this field.', values: 'too many values' });
});
