// The one Liquid engine of the platform: every mail (email templates, automation mail, forms'
// confirmation mail, RSS issues) and every render in the rss service (issue subjects, the test render
// of a newsletter at save) goes through compileTemplate / renderTemplate, with the same options and
// limits. Compile a template's subject/html/text once (syntax errors with line and column, the
// variables it reads), then render it with a recipient's values: compiledTemplate keeps the compiled
// forms of recent templates (a bounded LRU keyed by a hash of the source), so a template is parsed
// once, not per mail. Pure: no I/O, no store, no clock beyond liquidjs' render-time limit.
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
// Rendering is synchronous (liquidjs' sync mode: no filter of this engine is asynchronous), one
// promise for the whole render instead of one per node. A render that runs past SYNC_RENDER_BUDGET_MS
// is started again in the asynchronous mode, which lets the event loop turn while it runs (newEngine).
//
// Values are HTML-escaped in the html part unless `| raw`, with one exception: trusted HTML
// (RenderValues.trustedHtml, see html-values.ts), markup the platform made safe itself, is printed as
// markup in html and as its text in subject and text.
import { createHash } from 'node:crypto';
import { Lru, semaphore } from '@mailer/kit';
import { Context, filters, Liquid, toPromise, toValueSync, type Template } from 'liquidjs';
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
/**
 * How much CPU a synchronous render may spend, holding the event loop (about what a large store page
 * does), before it is given up and rendered again asynchronously. Mail templates render in well under
 * a millisecond.
 */
export const SYNC_RENDER_BUDGET_MS = 20;
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

/**
 * Compiled templates by a hash of their source: every template a process renders (a stored version,
 * an RSS newsletter's content) is parsed once while it is in use. Bounded by entries and by source
 * characters (a compiled tree is a few times its source).
 */
const compiled = new Lru<string, CompiledTemplate>(500, 64 * 1024 * 1024);

/** compileTemplate, once per distinct source while it stays among the recently used ones. */
export function compiledTemplate(source: TemplateSource): CompiledTemplate {
  const hash = createHash('sha256');
  for (const part of [source.subject, source.html, source.text, source.css]) hash.update(part === undefined || part === null ? '\u0001' : `\u0002${part}`).update('\u0000');
  const key = hash.digest('base64');
  let hit = compiled.get(key);
  if (!hit) {
    hit = compileTemplate(source);
    compiled.set(key, hit, source.subject.length + source.html.length + (source.text?.length ?? 0) + (source.css?.length ?? 0));
  }
  return hit;
}

/**
 * The render-time limiter of a synchronous render (liquidjs checks it between nodes with the time
 * now): the render is given up once it has spent SYNC_RENDER_BUDGET_MS of CPU, or RENDER_LIMIT_MS
 * whatever the CPU. The CPU is what holds the event loop: on a busy machine the wall clock also
 * counts the time the process waited for a core, which would send harmless renders to the slow path.
 */
class SyncBudget {
  private readonly started = performance.now();
  private readonly cpuAtStart = process.threadCpuUsage();

  check(now: number): void {
    const wall = now - this.started;
    if (wall <= SYNC_RENDER_BUDGET_MS) return;
    const cpu = process.threadCpuUsage(this.cpuAtStart);
    if (wall > RENDER_LIMIT_MS || (cpu.user + cpu.system) / 1000 > SYNC_RENDER_BUDGET_MS) throw new SyncBudgetExceeded();
  }
}

/**
 * Renders one part. `sync`: in one go, given up (SyncBudgetExceeded) once it has run for
 * SYNC_RENDER_BUDGET_MS; otherwise asynchronously, yielding to the event loop, up to RENDER_LIMIT_MS.
 */
function renderPart(engine: Liquid, templates: Template[], scope: Record<string, unknown>, path: TemplatePart, trustedHtml: ReadonlySet<string> | null | undefined, sync: true): string;
function renderPart(engine: Liquid, templates: Template[], scope: Record<string, unknown>, path: TemplatePart, trustedHtml: ReadonlySet<string> | null | undefined, sync: false): Promise<string>;
function renderPart(engine: Liquid, templates: Template[], scope: Record<string, unknown>, path: TemplatePart, trustedHtml: ReadonlySet<string> | null | undefined, sync: boolean): string | Promise<string> {
  const emitter = new BoundedEmitter();
  const fail = (err: unknown): never => {
    // The innermost message says what went wrong (limit, filter); the wrappers add only positions.
    let inner: unknown = err;
    while ((inner as { originalError?: unknown }).originalError) inner = (inner as { originalError: unknown }).originalError;
    const message = (inner as Error)?.message ?? String(inner);
    if (inner instanceof SyncBudgetExceeded) throw inner;
    throw new TemplateError('template_render_failed', `${path}: ${message}`, [{ path, problem: position(err) }]);
  };
  try {
    const ctx = sync ? new Context(scope, engine.options, { sync: true }, { renderLimit: new SyncBudget() as never }) : new Context(scope, engine.options, { sync: false });
    if (trustedHtml?.size) trustedOf.set(ctx, trustedHtml);
    // renderTemplates is a generator (liquidjs drives sync and async renders alike)
    const run = engine.renderer.renderTemplates(templates, ctx, emitter as never);
    if (sync) {
      toValueSync(run);
      return emitter.buffer;
    }
    return toPromise(run).then(() => emitter.buffer, fail);
  } catch (err) {
    return fail(err);
  }
}

class SyncBudgetExceeded extends Error {}

/**
 * How many renders run at once in the process. RENDER_LIMIT_MS is wall time from a render's start,
 * and interleaved renders share the CPU: a burst of 1,000 one-millisecond renders started together
 * all passed the limit (422 template_render_failed for a harmless template under load). Waiting for a
 * slot does not count, so the limit measures a render's own cost, at most RENDERS_AT_ONCE-fold.
 */
export const RENDERS_AT_ONCE = 4;
const renderSlot = semaphore(RENDERS_AT_ONCE);

/**
 * Asynchronous renders in flight or waiting for a slot. While there is one, every render waits for a
 * slot and runs asynchronously too: synchronous renders in between would stretch its wall clock.
 */
let asyncRenders = 0;

/** Renders a compiled template for one recipient: synchronously, or asynchronously when it takes longer. */
export async function renderTemplate(compiled: CompiledTemplate, values: RenderValues): Promise<RenderedMessage> {
  if (asyncRenders === 0) {
    try {
      return render(compiled, values, true);
    } catch (err) {
      if (!(err instanceof SyncBudgetExceeded)) throw err;
    }
  }
  asyncRenders++;
  try {
    return await renderSlot(() => render(compiled, values, false));
  } finally {
    asyncRenders--;
  }
}

function render(compiled: CompiledTemplate, values: RenderValues, sync: true): RenderedMessage;
function render(compiled: CompiledTemplate, values: RenderValues, sync: false): Promise<RenderedMessage>;
function render(compiled: CompiledTemplate, values: RenderValues, sync: boolean): RenderedMessage | Promise<RenderedMessage> {
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
  if (sync) {
    const subject = renderPart(plainEngine, compiled.subject, scope, 'subject', trusted, true);
    const html = inlineCss(compiled, renderPart(htmlEngine, compiled.html, scope, 'html', trusted, true));
    const text = compiled.text ? renderPart(plainEngine, compiled.text, scope, 'text', trusted, true) : htmlToText(html);
    return rendered(subject, html, text);
  }
  return (async () => {
    const subject = await renderPart(plainEngine, compiled.subject, scope, 'subject', trusted, false);
    const html = inlineCss(compiled, await renderPart(htmlEngine, compiled.html, scope, 'html', trusted, false));
    const text = compiled.text ? await renderPart(plainEngine, compiled.text, scope, 'text', trusted, false) : htmlToText(html);
    return rendered(subject, html, text);
  })();
}

/** juice: the template's stylesheet and the html's own <style> blocks inlined. */
function inlineCss(compiled: CompiledTemplate, rawHtml: string): string {
  try {
    // Without a stylesheet or <style> blocks juice would only parse and re-serialize the html (most
    // of a render's cost), so it is skipped.
    if (compiled.css) return juice(rawHtml, { extraCss: compiled.css });
    return /<style[\s>]/i.test(rawHtml) ? juice(rawHtml) : rawHtml;
  } catch (err) {
    throw new TemplateError('template_render_failed', `html: ${(err as Error).message}`, [{ path: 'html', problem: (err as Error).message }]);
  }
}

function rendered(subject: string, html: string, text: string): RenderedMessage {
  // A subject is a header: a line break from any value would start a new header (Bcc:...).
  return { subject: subject.replace(/[\r\n]+/g, ' ').trim(), html, text };
}
