// The template domain alone (no processes needed): compile errors, variables, escaping, derived text,
// header-injection safety, reserved keys, and the limits a hostile template cannot get past.
import { createHook } from 'node:async_hooks';
import {
  compiledTemplate, compileTemplate, renderTemplate, TemplateError, MAX_OUTPUT_CHARS, MAX_TEMPLATE_PART_CHARS, htmlValue, takeHtmlValues,
  type TemplateSource, type RenderValues,
} from '../src';

const subscriber = { email: 'ann@example.com', firstName: 'Ann', fields: {} };

async function render(source: TemplateSource, values: Partial<RenderValues> = {}) {
  return renderTemplate(compileTemplate(source), { subscriber, ...values });
}

function caught(fn: () => unknown): TemplateError {
  try { fn(); } catch (err) { expect(err).toBeInstanceOf(TemplateError); return err as TemplateError; }
  throw new Error('expected a TemplateError');
}

async function caughtAsync(p: Promise<unknown>): Promise<TemplateError> {
  try { await p; } catch (err) { expect(err).toBeInstanceOf(TemplateError); return err as TemplateError; }
  throw new Error('expected a TemplateError');
}

/** The limits a hostile render meets, by the text of their refusal (each part reports its own). */
const LIMIT_TEXT = {
  render: 'template render limit exceeded',
  memory: 'memory alloc limit exceeded',
  output: `output exceeds ${MAX_OUTPUT_CHARS} characters`,
};

/**
 * A hostile render is refused (template_render_failed) by the named limit, in the named part. How fast
 * a refusal comes is measured by bench/templates.js, not here.
 */
async function refusedBy(limit: keyof typeof LIMIT_TEXT, part: 'subject' | 'html' | 'text', source: TemplateSource, values: Partial<RenderValues> = {}) {
  const err = await caughtAsync(render(source, values));
  expect({ errorId: err.errorId, message: err.message, paths: err.details.map((d) => d.path) }).toEqual({ errorId: 'template_render_failed', message: `${part}: ${LIMIT_TEXT[limit]}`, paths: [part] });
  return err;
}

describe('compileTemplate', () => {
  it('lists the sorted top-level variables, without loop variables and assigns', () => {
    const t = compileTemplate({
      subject: 'Hi {{ subscriber.firstName }}',
      html: '{% assign total = order.total %}{% for item in items %}{{ item.name }}{{ total }}{% endfor %}{{ links.unsubscribe }}',
      text: '{{ coupon }} {{ order.id }}',
    });
    expect(t.variables).toEqual(['coupon', 'items', 'links', 'order', 'subscriber']);
  });

  it('reports a syntax error per part with line and column', () => {
    const err = caught(() => compileTemplate({ subject: 'Hi {{ name', html: '<p>\n\n  {% if x %}oops', text: 'fine' }));
    expect(err.errorId).toBe('template_syntax_error');
    const byPath = Object.fromEntries(err.details.map((d) => [d.path, d.problem]));
    expect(Object.keys(byPath).sort()).toEqual(['html', 'subject']);
    expect(byPath.subject).toMatch(/^line 1, col 4: /);
    expect(byPath.html).toMatch(/^line 3, col 3: .*if/);
  });

  it('refuses include, render and layout: no file can be read', () => {
    for (const html of ["{% include '/etc/passwd' %}", "{% render '/etc/passwd' %}", "{% layout '/etc/passwd' %}", "{% liquid include '/etc/passwd' %}"]) {
      const err = caught(() => compileTemplate({ subject: 's', html }));
      expect(err.errorId).toBe('template_syntax_error');
      expect(err.details[0].path).toBe('html');
      expect(err.details[0].problem).toMatch(/^line 1, col (1|11): tag "(include|render|layout)" not found/);
    }
  });

  it('refuses a part longer than the source limit before parsing it', () => {
    const err = caught(() => compileTemplate({ subject: 's', html: 'x'.repeat(MAX_TEMPLATE_PART_CHARS + 1) }));
    expect(err.errorId).toBe('validation_failed');
    expect(err.details).toEqual([{ path: 'html', problem: expect.stringContaining(String(MAX_TEMPLATE_PART_CHARS)) }]);
    expect(() => compileTemplate({ subject: 's', html: 'x'.repeat(MAX_TEMPLATE_PART_CHARS) })).not.toThrow();
  });
});

describe('renderTemplate', () => {
  it('escapes values in html unless | raw, and keeps them plain in subject and text', async () => {
    const out = await render(
      { subject: 'About {{ thing }}', html: '<p>{{ thing }}</p><div>{{ snippet | raw }}</div>', text: 'About {{ thing }}' },
      { substitutionData: { thing: '<script>alert(1)</script> & co', snippet: '<b>bold</b>' } },
    );
    expect(out.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
    expect(out.html).not.toContain('<script>');
    expect(out.html).toContain('<b>bold</b>');
    expect(out.subject).toBe('About <script>alert(1)</script> & co');
    expect(out.text).toBe('About <script>alert(1)</script> & co');
  });

  it('collapses line breaks in the subject so no header can be injected', async () => {
    const out = await render({ subject: 'Order {{ id }}\n{{ id }}', html: 'x' }, { substitutionData: { id: '1\r\nBcc: x@evil.example' } });
    expect(out.subject).not.toMatch(/[\r\n]/);
    expect(out.subject).toBe('Order 1 Bcc: x@evil.example 1 Bcc: x@evil.example');
  });

  it('renders a missing variable empty', async () => {
    const out = await render({ subject: '[{{ nope }}]', html: '<p>[{{ nope.deeper }}]</p>', text: '[{{ subscriber.lastName }}]' });
    expect(out.subject).toBe('[]');
    expect(out.html).toBe('<p>[]</p>');
    expect(out.text).toBe('[]');
  });

  it('gives subscriber, event and links, inlines CSS and derives text from html', async () => {
    const out = await render(
      {
        subject: 'Hi {{ subscriber.firstName }}',
        html: '<style>p { color: red; }</style><p>{{ event.properties.plan }} for {{ subscriber.email }}</p><a href="{{ links.unsubscribe }}">Unsubscribe</a>',
      },
      { event: { eventKey: 'signup', properties: { plan: 'Pro' } }, links: { unsubscribe: 'https://x.example/u/t?a=1&b=2' } },
    );
    expect(out.subject).toBe('Hi Ann');
    expect(out.html).toMatch(/<p style="color: red;">Pro for ann@example.com<\/p>/);
    expect(out.html).not.toContain('<style>');
    expect(out.html).toContain('href="https://x.example/u/t?a=1&amp;b=2"');
    expect(out.text).toContain('Pro for ann@example.com');
    expect(out.text).toContain('https://x.example/u/t?a=1&b=2');
  });

  it('refuses the reserved substitution keys', async () => {
    for (const key of ['subscriber', 'event', 'links']) {
      const err = await caughtAsync(render({ subject: 's', html: 'h' }, { substitutionData: { [key]: 'x' } }));
      expect(err.errorId).toBe('reserved_substitution_key');
      expect(err.details[0].path).toBe(`substitutionData.${key}`);
    }
  });

  it('reports a render failure with the engine message', async () => {
    const err = await caughtAsync(render({ subject: 's', html: '<p>\n{% for i in (1..1000000000) %}x{% endfor %}' }));
    expect(err.errorId).toBe('template_render_failed');
    expect(err.message).toMatch(/^html: .*memory/i);
    expect(err.details).toEqual([{ path: 'html', problem: expect.stringMatching(/^line 2, col 1: .*memory/i) }]);
  });
  it('renders a burst of harmless templates without any passing the render limit (renders take turns)', async () => {
    // 1,000 renders of about a millisecond each (about 1 s together), started at once like a backlog
    // of sends: before renders took turns, each one's wall-clock limit counted the others' work and
    // they were refused. Each one is light so that on a busy CI box (30x slower) a render's own time,
    // even shared with the RENDERS_AT_ONCE - 1 others, stays far below the limit.
    const compiled = compileTemplate({ subject: 'Hi {{ subscriber.firstName }}', html: '{% for i in (1..40) %}<p>{{ i }}</p>{% endfor %}' });
    const results = await Promise.allSettled(Array.from({ length: 1000 }, () => renderTemplate(compiled, { subscriber })));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect((results[999] as PromiseFulfilledResult<{ subject: string }>).value.subject).toBe('Hi Ann');
  }, 180_000);
});

describe('compile once, render in one go', () => {
  it('parses a template once per distinct source, and again when any part differs', () => {
    const source = { subject: 'Hi {{ subscriber.firstName }}', html: '<p>{{ n }}</p>', text: null, css: 'p { color: red; }' };
    const first = compiledTemplate(source);
    expect(compiledTemplate({ ...source })).toBe(first);
    expect(compiledTemplate({ ...source, html: '<p>{{ n }}!</p>' })).not.toBe(first);
    expect(compiledTemplate({ ...source, text: '' })).not.toBe(first);
    expect(compiledTemplate({ ...source, css: null })).not.toBe(first);
    // a source that does not compile is refused every time, never cached
    expect(caught(() => compiledTemplate({ subject: 's', html: '{% if %}' })).errorId).toBe('template_syntax_error');
    expect(caught(() => compiledTemplate({ subject: 's', html: '{% if %}' })).errorId).toBe('template_syntax_error');
  });

  it('renders a harmless template synchronously: a handful of promises, not one per node', async () => {
    const compiled = compileTemplate({ subject: 'Hi {{ subscriber.firstName }}', html: '{% for i in (1..200) %}<p>{{ i }} {{ subscriber.email }}</p>{% endfor %}' });
    await renderTemplate(compiled, { subscriber }); // warm
    let promises = 0;
    const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && promises++) }).enable();
    let out;
    try {
      out = await renderTemplate(compiled, { subscriber });
    } finally {
      hook.disable();
    }
    expect(out.html).toContain('<p>200 ann@example.com</p>');
    expect(promises).toBeLessThan(20);
  });

  it('a render that runs long goes on asynchronously: the event loop keeps turning until its limit stops it', async () => {
    const compiled = compileTemplate({ subject: 's', html: '{% for a in (1..100000) %}{% for b in (1..100000) %}x{% endfor %}{% endfor %}' });
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    try {
      expect((await caughtAsync(renderTemplate(compiled, { subscriber }))).message).toBe('html: template render limit exceeded');
    } finally {
      clearInterval(ticker);
    }
    // about 500 ms of rendering: a render that held the event loop throughout would see none
    expect(turns).toBeGreaterThan(10);
  });
});

describe('hostile templates', () => {
  it('stops a billion-iteration loop', async () => {
    await refusedBy('memory', 'html', { subject: 's', html: '{% for i in (1..1000000000) %}x{% endfor %}' });
  });

  it('stops nested loops', async () => {
    await refusedBy('render', 'html', {
      subject: 's',
      html: '{% for a in (1..100000) %}{% for b in (1..100000) %}{% for c in (1..100000) %}x{% endfor %}{% endfor %}{% endfor %}',
    });
  });

  it('stops nested loops in the subject and text too', async () => {
    const loop = '{% for a in (1..10000) %}{% for b in (1..10000) %}y{% endfor %}{% endfor %}';
    await refusedBy('render', 'subject', { subject: loop, html: 'h' });
    await refusedBy('render', 'text', { subject: 's', html: 'h', text: loop });
  });

  it('stops huge repeats with append', async () => {
    await refusedBy(
      'output',
      'html',
      { subject: 's', html: '{% for i in (1..100000) %}{{ big | append: big | append: big }}{% endfor %}' },
      { substitutionData: { big: 'x'.repeat(100000) } },
    );
  });

  it('stops assign doubling a string', async () => {
    const doubling = '{% assign s = "xxxxxxxxxxxxxxxx" %}' + '{% assign s = s | append: s %}'.repeat(40) + '{{ s | size }}';
    await refusedBy('memory', 'html', { subject: 's', html: doubling });
  });

  it('bounds the output of a loop printing a large value', async () => {
    await refusedBy('output', 'html', { subject: 's', html: '{% for i in (1..10000) %}{{ big }}{% endfor %}' }, { substitutionData: { big: 'x'.repeat(10000) } });
  });

  it('bounds a capture growing in a loop, in every part', async () => {
    const grow = '{% capture s %}{% for i in (1..100000) %}{{ big }}{% endfor %}{% endcapture %}{{ s | size }}';
    const sources: Array<['subject' | 'html' | 'text', TemplateSource]> = [['subject', { subject: grow, html: 'h' }], ['html', { subject: 's', html: grow }], ['text', { subject: 's', html: 'h', text: grow }]];
    for (const [part, source] of sources) await refusedBy('output', part, source, { substitutionData: { big: 'x'.repeat(10000) } });
    const doubling = '{% assign s = "x" %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s | size }}';
    await refusedBy('output', 'subject', { subject: doubling, html: 'h' });
  });

  it('allows output right up to the limit', async () => {
    const out = await render({ subject: 's', html: '{% for i in (1..1024) %}{{ big }}{% endfor %}' }, { substitutionData: { big: 'x'.repeat(MAX_OUTPUT_CHARS / 1024) } });
    expect(out.html.length).toBe(MAX_OUTPUT_CHARS);
  });

  it('gives no access to prototypes', async () => {
    const out = await render({
      subject: '[{{ constructor }}][{{ __proto__ }}]',
      html: '[{{ subscriber.constructor.name }}][{{ subscriber.__proto__ }}][{{ data.constructor.constructor }}][{{ "x".constructor }}][{{ list.constructor.name }}]',
      text: '[{{ toString }}][{{ subscriber.hasOwnProperty }}]',
    }, { substitutionData: { data: { a: 1 }, list: [1] } });
    expect(out.subject).toBe('[][]');
    expect(out.html).toBe('[][][][][]');
    expect(out.text).toBe('[][]');
  });

  it('does not let substitutionData pollute prototypes', async () => {
    const substitutionData = JSON.parse('{"__proto__": {"polluted": "yes"}, "a": "b"}');
    const out = await render({ subject: '{{ polluted }}', html: '{{ a }}{{ polluted }}' }, { substitutionData });
    expect(out.subject).toBe('');
    expect(out.html).toBe('b');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('trusted HTML', () => {
  const summary = '<p>Fresh <b>trout</b> &amp; chips</p>';

  it('prints trusted strings as markup in html and as text in subject and text; every other value stays escaped', async () => {
    const { values, trustedHtml } = takeHtmlValues({ items: [{ summary: htmlValue(summary), title: '<b>not trusted</b>' }] });
    const out = await render(
      { subject: '{{ items[0].summary }}', html: '{{ items[0].summary }}|{{ items[0].summary | raw }}|{{ items[0].title }}|{{ items[0].summary | strip_html }}|{{ copy }}', text: '{{ items[0].summary }}' },
      { substitutionData: { ...values, copy: '<i>x</i>' }, trustedHtml },
    );
    // A filter's result is a new value: escaped like any other.
    expect(out.html).toBe(`${summary}|${summary}|&lt;b&gt;not trusted&lt;/b&gt;|Fresh trout &amp;amp; chips|&lt;i&gt;x&lt;/i&gt;`);
    expect(out.subject).toBe('Fresh trout & chips');
    expect(out.text).toBe('Fresh trout & chips');
  });

  it('without the set the same values are escaped (customer data is never trusted)', async () => {
    const out = await render({ subject: 's', html: '{{ s }}' }, { substitutionData: { s: summary } });
    expect(out.html).toBe('&lt;p&gt;Fresh &lt;b&gt;trout&lt;/b&gt; &amp;amp; chips&lt;/p&gt;');
    // A mark in customer data is just an object: printed as data, never as markup.
    const marked = await render({ subject: 's', html: '{{ s["$html"] }}' }, { substitutionData: { s: htmlValue('<script>x</script>') } });
    expect(marked.html).toBe('&lt;script&gt;x&lt;/script&gt;');
  });

  it('takeHtmlValues: only exact marks are taken; keys stay own data, __proto__ included', () => {
    const parsed = JSON.parse('{"a": {"$html": "<b>1</b>"}, "b": [{"$html": "<i>2</i>"}], "c": {"$html": "x", "more": 1}, "d": {"$html": 3}, "__proto__": {"$html": "<u>p</u>"}}');
    const { values, trustedHtml } = takeHtmlValues(parsed);
    expect([...trustedHtml].sort()).toEqual(['<b>1</b>', '<i>2</i>', '<u>p</u>']);
    expect(values.a).toBe('<b>1</b>');
    expect(values.b).toEqual(['<i>2</i>']);
    expect(values.c).toEqual({ $html: 'x', more: 1 });
    expect(values.d).toEqual({ $html: 3 });
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(values, '__proto__')).toBe(true);
  });
});
