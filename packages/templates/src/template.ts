// The one Liquid engine of the platform: every mail (email templates, automation mail, forms'
// confirmation mail, RSS issues) and every render in the rss service (issue subjects, the test render
// of a newsletter at save) goes through compileTemplate / renderTemplate, with the same options and
// limits. Compile a template's subject/html/text once (syntax errors with line and column, the
// variables it reads), then render it with a recipient's values. Pure: no I/O, no store, no clock
// beyond liquidjs' render-time limit.
//
// Limits a hostile template cannot get past (each one is tested in test/template.test.ts):
// - MAX_TEMPLATE_PART_CHARS: source size of each of subject/html/text, checked before parsing;
//   PARSE_LIMIT is liquidjs' own bound on characters parsed per parse() call (defence in depth).
// - RENDER_LIMIT_MS: wall time of one render() of one part; liquidjs checks it between every node it
//   renders, so `{% for %}` loops of any size stop.
// - MEMORY_LIMIT: liquidjs' count of characters/elements allocated by filters, ranges and assigns in
//   one render (`(1..1000000000)`, `append`/`join` doubling), refused before the allocation.
// - MAX_OUTPUT_CHARS: the rendered output of one part; a bounded emitter refuses the write that would
//   pass it, so a loop printing a large value is stopped long before memory is at risk; the same bound
//   applies to every string a tag renders on its own ({% capture %}).
// - No file access: the include/render/layout tags do not exist (a template using them is a syntax
//   error, at save and at every later render of an older stored one) and the engine's fs refuses every
//   lookup. No prototype access: ownPropertyOnly.
//
// Values are HTML-escaped in the html part unless `| raw`, with one exception: trusted HTML
// (RenderValues.trustedHtml, see html-values.ts), markup the platform made safe itself, is printed as
// markup in html and as its text in subject and text.
import { semaphore } from '@mailer/kit';
import { Context, filters, Liquid, toPromise, type Template } from 'liquidjs';
import juice from 'juice';
import { compile as compileHtmlToText } from 'html-to-text';

export const MAX_TEMPLATE_PART_CHARS = 256 * 1024;
export const PARSE_LIMIT = 3 * MAX_TEMPLATE_PART_CHARS;
export const RENDER_LIMIT_MS = 500;
export const MEMORY_LIMIT = 16 * 1024 * 1024;
export const MAX_OUTPUT_CHARS = 1024 * 1024;

/** Names substitutionData may not use: the renderer supplies them. */
export const RESERVED_SUBSTITUTION_KEYS = ['subscriber', 'event', 'links'] as const;

export type TemplatePart = 'subject' | 'html' | 'text';
export interface TemplateProblem { path: string; problem: string }

/** A refusal with the errorId and details of the public API; the handlers map it to 400/422. */
export class TemplateError extends Error {
  constructor(
    readonly errorId: 'template_syntax_error' | 'validation_failed' | 'reserved_substitution_key' | 'template_render_failed',
    message: string,
    readonly details: TemplateProblem[] = [],
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** css: a stylesheet inlined into the rendered html (RSS newsletters' cssContent); never rendered as Liquid. */
export interface TemplateSource { subject: string; html: string; text?: string | null; css?: string | null }

export interface CompiledTemplate {
  subject: Template[];
  html: Template[];
  /** null: the text is derived from the rendered html. */
  text: Template[] | null;
  /** Sorted top-level names read across the parts, loop variables and assigns excluded. */
  variables: string[];
  /** Inlined into the html with the html's own <style> blocks; null: none. */
  css?: string | null;
}

export interface RenderValues {
  substitutionData?: Record<string, unknown> | null;
  subscriber: Record<string, unknown>;
  event?: Record<string, unknown> | null;
  links?: Record<string, unknown> | null;
  /**
   * Strings among the values that are HTML the platform made safe (takeHtmlValues): printed as markup
   * in html (escaping them would show their tags to the reader), as text in subject and text.
   */
  trustedHtml?: ReadonlySet<string> | null;
}

export interface RenderedMessage { subject: string; html: string; text: string }

/**
 * The reader a template is test-rendered for when it is saved (email templates, RSS newsletters): one
 * render with the engine's limits and none of a caller's data, so a template that passes a limit
 * whatever its data (a loop over a huge range, a string doubled in a loop, loops nested too deep) is
 * refused when it is written, `template_render_failed`, not at every send. Limits a caller's values
 * make a template reach are enforced at every render.
 */
export const SAMPLE_READER: Readonly<Required<Pick<RenderValues, 'subscriber' | 'links'>>> = {
  subscriber: { email: 'reader@example.com', firstName: 'Reader', fields: {} },
  links: { unsubscribe: 'https://mail.example/u/sample', preferences: 'https://mail.example/u/sample' },
};

/** The engine's fs: no template may read a file, whatever tag or option a later version adds. */
const noFiles = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file: string) => { throw new Error(`file access is not allowed: ${file}`); },
  readFileSync: (file: string) => { throw new Error(`file access is not allowed: ${file}`); },
  resolve: (_dir: string, file: string) => file,
};

/** liquidjs' emitter interface, with MAX_OUTPUT_CHARS enforced on every write. */
class BoundedEmitter {
  buffer = '';
  write(html: unknown): void {
    const s = html === undefined || html === null ? '' : String(html);
    if (this.buffer.length + s.length > MAX_OUTPUT_CHARS) {
      throw new Error(`output exceeds ${MAX_OUTPUT_CHARS} characters`);
    }
    this.buffer += s;
  }
}

/** How long a render may run before it lets other work of the process run (see newEngine). */
export const YIELD_EVERY_MS = 5;
let lastYield = 0;

/** The trusted HTML of the render a Context belongs to (renderPart sets it). */
const trustedOf = new WeakMap<Context, ReadonlySet<string>>();
const isTrusted = (ctx: Context, value: unknown): value is string => typeof value === 'string' && trustedOf.get(ctx)?.has(value) === true;
type OutputContext = { context: Context };

/** html's output filter: liquidjs' escape, except for trusted HTML. */
function escapeUnlessTrusted(this: OutputContext, value: unknown): string {
  return isTrusted(this.context, value) ? value : (filters.escape as (this: OutputContext, v: unknown) => string).call(this, value);
}

/** subject's and text's output filter: trusted HTML as its text; everything else as it is (the emitter stringifies it). */
function textOfTrusted(this: OutputContext, value: unknown): string {
  return isTrusted(this.context, value) ? htmlToText(value) : (value as string);
}

function newEngine(escapeHtml: boolean): Liquid {
  const engine = new Liquid({
    fs: noFiles,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    ownPropertyOnly: true,
    strictVariables: false,
    strictFilters: true,
    parseLimit: PARSE_LIMIT,
    renderLimit: RENDER_LIMIT_MS,
    memoryLimit: MEMORY_LIMIT,
    outputEscape: escapeHtml ? escapeUnlessTrusted : textOfTrusted,
  });
  // Without these tags a template naming them fails to parse: refused at save, not at send.
  for (const tag of ['include', 'render', 'layout', 'block']) delete (engine.tags as Record<string, unknown>)[tag];
  // Tags that render into a string of their own ({% capture %}) call renderTemplates without an emitter;
  // give them a bounded one too, or a capture in a loop could grow a string until V8 gives up.
  const renderer = engine.renderer;
  const renderTemplates = renderer.renderTemplates.bind(renderer);
  // liquidjs' async render is one long chain of microtasks: a template spending its whole
  // RENDER_LIMIT_MS would hold the event loop (every other request of the process) that long, and
  // renders arriving together would run one after another. Every YIELD_EVERY_MS the render lets the
  // event loop turn (setImmediate), so concurrent renders share the CPU and all end within their own
  // wall-clock limit while the process keeps answering.
  renderer.renderTemplates = function* (templates, ctx, emitter) {
    if (!ctx.sync && performance.now() - lastYield > YIELD_EVERY_MS) {
      lastYield = performance.now();
      yield new Promise<void>((resolve) => setImmediate(resolve));
    }
    return yield* renderTemplates(templates, ctx, emitter ?? (new BoundedEmitter() as never));
  };
  return engine;
}

// convert() would compile its options (a selector decision tree) on every call: a third of a render.
const htmlToText = compileHtmlToText({ wordwrap: 78 });
const htmlEngine = newEngine(true);
const plainEngine = newEngine(false);

function position(err: unknown): string {
  const token = (err as { token?: { getPosition?: () => [number, number] } }).token;
  const pos = token?.getPosition?.();
  // liquidjs appends ", line:3, col:7" to its messages; say it once, in the API's form ("line 3, col 7: ..."), in front.
  const message = String((err as Error).message ?? err).replace(/,? line:\d+, col:\d+$/, '').split('\n')[0];
  return pos ? `line ${pos[0]}, col ${pos[1]}: ${message}` : message;
}

/** Parses every part; all syntax errors at once, so an editor can show them together. */
export function compileTemplate(source: TemplateSource): CompiledTemplate {
  const parts: [TemplatePart, string | null | undefined][] = [['subject', source.subject], ['html', source.html], ['text', source.text]];
  const tooLong = [...parts, ['css', source.css] as const].filter(([, s]) => typeof s === 'string' && s.length > MAX_TEMPLATE_PART_CHARS);
  if (tooLong.length) {
    throw new TemplateError('validation_failed', `a template part may hold at most ${MAX_TEMPLATE_PART_CHARS} characters`,
      tooLong.map(([path, s]) => ({ path, problem: `${s!.length} characters, more than ${MAX_TEMPLATE_PART_CHARS}` })));
  }
  const problems: TemplateProblem[] = [];
  const parsed: Partial<Record<TemplatePart, Template[]>> = {};
  for (const [path, s] of parts) {
    if (s === undefined || s === null) continue;
    try {
      parsed[path] = (path === 'html' ? htmlEngine : plainEngine).parse(s);
    } catch (err) {
      problems.push({ path, problem: position(err) });
    }
  }
  if (problems.length) throw new TemplateError('template_syntax_error', 'the template has a syntax error', problems);
  const variables = new Set<string>();
  for (const [path] of parts) {
    const templates = parsed[path];
    if (templates) for (const name of htmlEngine.globalVariablesSync(templates)) variables.add(name);
  }
  return { subject: parsed.subject!, html: parsed.html!, text: parsed.text ?? null, variables: [...variables].sort(), css: source.css || null };
}

async function renderPart(engine: Liquid, templates: Template[], scope: Record<string, unknown>, path: TemplatePart, trustedHtml: ReadonlySet<string> | null | undefined): Promise<string> {
  const emitter = new BoundedEmitter();
  try {
    const ctx = new Context(scope, engine.options, { sync: false });
    if (trustedHtml?.size) trustedOf.set(ctx, trustedHtml);
    // renderTemplates is a generator (liquidjs drives sync and async renders alike); toPromise runs it.
    await toPromise(engine.renderer.renderTemplates(templates, ctx, emitter as never));
    return emitter.buffer;
  } catch (err) {
    // The innermost message says what went wrong (limit, filter); the wrappers add only positions.
    let inner: unknown = err;
    while ((inner as { originalError?: unknown }).originalError) inner = (inner as { originalError: unknown }).originalError;
    const message = (inner as Error)?.message ?? String(inner);
    throw new TemplateError('template_render_failed', `${path}: ${message}`, [{ path, problem: position(err) }]);
  }
}

/**
 * How many renders run at once in the process. RENDER_LIMIT_MS is wall time from a render's start,
 * and interleaved renders share the CPU: a burst of 1,000 one-millisecond renders started together
 * all passed the limit (422 template_render_failed for a harmless template under load). Waiting for a
 * slot does not count, so the limit measures a render's own cost, at most RENDERS_AT_ONCE-fold.
 */
export const RENDERS_AT_ONCE = 4;
const renderSlot = semaphore(RENDERS_AT_ONCE);

/** Renders a compiled template for one recipient. */
export function renderTemplate(compiled: CompiledTemplate, values: RenderValues): Promise<RenderedMessage> {
  return renderSlot(() => render(compiled, values));
}

async function render(compiled: CompiledTemplate, values: RenderValues): Promise<RenderedMessage> {
  const data = values.substitutionData ?? {};
  const reserved = RESERVED_SUBSTITUTION_KEYS.filter((k) => Object.prototype.hasOwnProperty.call(data, k));
  if (reserved.length) {
    throw new TemplateError('reserved_substitution_key', `substitutionData may not use the names ${RESERVED_SUBSTITUTION_KEYS.join(', ')}`,
      reserved.map((k) => ({ path: `substitutionData.${k}`, problem: 'reserved name' })));
  }
  const scope: Record<string, unknown> = { ...data, subscriber: values.subscriber };
  if (values.event) scope.event = values.event;
  if (values.links) scope.links = values.links;

  const trusted = values.trustedHtml;
  const subject = await renderPart(plainEngine, compiled.subject, scope, 'subject', trusted);
  const rawHtml = await renderPart(htmlEngine, compiled.html, scope, 'html', trusted);
  let html: string;
  try {
    html = compiled.css ? juice(rawHtml, { extraCss: compiled.css }) : juice(rawHtml);
  } catch (err) {
    throw new TemplateError('template_render_failed', `html: ${(err as Error).message}`, [{ path: 'html', problem: (err as Error).message }]);
  }
  const text = compiled.text
    ? await renderPart(plainEngine, compiled.text, scope, 'text', trusted)
    : htmlToText(html);
  // A subject is a header: a line break from any value would start a new header (Bcc:...).
  return { subject: subject.replace(/[\r\n]+/g, ' ').trim(), html, text };
}
