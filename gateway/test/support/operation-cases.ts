/**
 * Bad requests generated from the OpenAPI document itself, for every operation it lists: each case
 * changes one thing of an otherwise valid request (CASE_KINDS: no key, a key in the URL, an unknown
 * query parameter, a malformed path id, an unknown resource, a body that is not JSON, too deep, too
 * large, truncated, not UTF-8, a member missing, unknown or of the wrong type, a bad Idempotency-Key,
 * a method the path lacks, ...) and knows the answer the document promises for it: status, errorId
 * and the member `details` names. Random values come from the caller's seeded generator, so a seed
 * replays a run.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  /** Reader pages forwarded to their owner (plain HTML answers, no key). */
  readerPage: boolean;
  /** No key needed (health, the document, /docs, reader pages). */
  open: boolean;
  op: Json;
}

export interface Expected {
  status: number;
  /** For API errors (JSON); reader pages answer a plain HTML page instead. */
  errorId?: string;
  /** A `details` entry with this path (and problem, when given). */
  detail?: { path: string; problem?: string };
  /** The Allow header of a 405. */
  allow?: string;
}

export interface Case {
  operationId: string;
  kind: CaseKind;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  expect: Expected;
}

export type Random = () => number;

/** The kinds of bad request, each with the answer it must get (see casesFor). */
export const CASE_KINDS = [
  'no key', 'wrong key', 'key in the URL', 'unknown token', 'unknown query parameter', 'bad query value', 'bad path value', 'unknown resource',
  'not JSON', 'not UTF-8 charset', 'unknown content encoding', 'truncated JSON', 'invalid UTF-8', 'nested too deep', 'too large', 'no body',
  'not an object', 'required member missing', 'unknown member', 'member of the wrong type', 'bad Idempotency-Key', 'method the path lacks',
  'malformed percent-encoding', 'path outside the document',
] as const;
export type CaseKind = (typeof CASE_KINDS)[number];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
export const READER_PREFIXES = ['/t/', '/u/', '/public/'];

export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!METHODS.includes(method)) continue;
      const readerPage = READER_PREFIXES.some((p) => path.startsWith(p));
      out.push({ method: method.toUpperCase(), path, operationId: op.operationId, readerPage, open: Array.isArray(op.security) && op.security.length === 0, op });
    }
  }
  return out;
}

/** The errorIds the document lists for one status of an operation (its own text or the shared response it refers to). */
export function documentedErrorIds(doc: Json, op: Json, status: number): string[] {
  let response = op.responses?.[String(status)];
  if (response?.$ref) response = doc.components.responses[response.$ref.split('/').pop()];
  const line = String(response?.description ?? '').split('\n').find((l) => l.startsWith('errorId: ')) ?? '';
  return [...line.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
}

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  return schema?.$ref ? resolve(doc, doc.components.schemas[schema.$ref.split('/').pop()]) : schema;
}

function parameters(doc: Json, op: Json): Json[] {
  return (op.parameters ?? []).map((p: Json) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p));
}

/** Deterministic helpers over the caller's generator. */
function draw(random: Random) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const word = (n = 6) => Array.from({ length: 1 + int(n) }, () => pick('abcdefghijklmnopqrstuvwxyz0123456789'.split(''))).join('');
  const uuid = () => {
    const b = Buffer.from(Array.from({ length: 16 }, () => int(256)));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  return { int, pick, word, uuid };
}

/** A well-formed value for a path parameter that names nothing in the account. */
function unknownPathValue(p: Json, d: ReturnType<typeof draw>): string {
  const s = p.schema ?? {};
  if (s.format === 'uuid' || s.anyOf?.some((x: Json) => x.format === 'uuid')) return d.uuid();
  if (p.name === 'email') return encodeURIComponent(`fuzz-${d.word()}@example.org`);
  if (p.name === 'domain') return `fuzz-${d.word()}.example.com`;
  if (p.name === 'token') return d.int(5) ? Buffer.from(Array.from({ length: 8 + d.int(40) }, () => d.int(256))).toString('base64url') : d.pick(['%zz', '%E0%A4%A', '%2e%2e', 'x.y']);
  return `fuzz-${d.word()}`; // a template name
}

/** A value the parameter's schema refuses, with the answer the validator gives for it; undefined when no simple one exists. */
function badParameterValue(p: Json, d: ReturnType<typeof draw>): { value: string; errorId: string } | undefined {
  const s = p.schema ?? {};
  const declared = s['x-error-ids'] ?? {};
  if (s.format === 'uuid') return { value: d.pick(['x', 'not-a-uuid', d.uuid().slice(1), d.uuid().replace(/-/g, ''), `${d.uuid()}0`, '00000000-0000-0000-0000-00000000000g']), errorId: 'invalid_uuid' };
  if (s.type === 'integer') return { value: d.pick(['1e2', '0x10', '+5', '1.5', 'NaN', '9'.repeat(30), '-1', '0', 'abc', '']), errorId: 'validation_failed' };
  if (s.type === 'boolean') return { value: d.pick(['yes', '2', 'TRUE ', 'no']), errorId: 'validation_failed' };
  if (s.enum) return { value: `${d.pick(s.enum as string[]).toLowerCase()}x`, errorId: 'validation_failed' };
  if (s.type === 'string' && s.maxLength) return { value: 'a'.repeat(s.maxLength + 1 + d.int(50)), errorId: declared.maxLength ?? 'validation_failed' };
  if (s.type === 'string' && s.pattern) return { value: d.pick(['-x', '.x', 'X-Y', 'a b']), errorId: declared.pattern ?? 'validation_failed' };
  return undefined;
}

/** A JSON value of a type the schema does not allow (undefined when every type is allowed or the schema is not a plain typed one). */
function wrongTyped(schema: Json | undefined, d: ReturnType<typeof draw>): unknown {
  if (!schema || schema.oneOf || schema.anyOf || schema.allOf || schema.not || schema.const !== undefined || !schema.type) return undefined;
  const allowed: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const candidates: Array<[string, unknown]> = [['string', 'x'], ['number', 1.5], ['integer', 7], ['boolean', true], ['null', null], ['array', []], ['object', {}]];
  const refused = candidates.filter(([t]) => !allowed.includes(t) && !(t === 'integer' && allowed.includes('number')));
  return refused.length ? d.pick(refused)[1] : undefined;
}

const BAD_UTF8 = [[0xc3, 0x28], [0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf5, 0x80, 0x80, 0x80]];
const KEY_PARAMETERS = ['apikey', 'api_key', 'api-key', 'key', 'x-api-key', 'x_api_key'];

/**
 * One case per kind that applies to the operation. `apiKey` is a valid key of the account the
 * requests run as; `bodyLimit` the largest body (bytes) of a path; `maxDepth` the JSON nesting limit.
 */
export function casesFor(doc: Json, o: Operation, random: Random, opts: { apiKey: string; bodyLimit(path: string): number; maxDepth: number }): Case[] {
  const d = draw(random);
  const params = parameters(doc, o.op);
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const media = o.op.requestBody?.content?.['application/json'];
  const bodySchema = resolve(doc, media?.schema);
  const example = media?.example;
  const key: Record<string, string> = o.open ? {} : { 'x-api-key': opts.apiKey };
  const fill = (values: Record<string, string>) => o.path.replace(/\{(\w+)\}/g, (_m, name) => values[name]);
  const validPath = () => fill(Object.fromEntries(pathParams.map((p) => [p.name, unknownPathValue(p, d)])));
  const json: Record<string, string> = { 'content-type': 'application/json' };
  const exampleText = example === undefined ? undefined : JSON.stringify(example);
  const cases: Case[] = [];
  const add = (kind: CaseKind, c: Omit<Case, 'operationId' | 'kind' | 'method'> & { method?: string }) => cases.push({ operationId: o.operationId, kind, method: o.method, ...c });
  const withBody = (kind: CaseKind, headers: Record<string, string>, body: string | Buffer, expect: Expected) => add(kind, { path: validPath(), headers: { ...key, ...headers }, body, expect });
  const statusOf = (status: number, errorId: string) => documentedErrorIds(doc, o.op, status).includes(errorId);
  /** The rest of a valid request: the key, and the documented example as the body. */
  const valid = () => ({ headers: { ...key, ...(exampleText ? json : {}) }, body: exampleText });

  // The key.
  if (!o.open) {
    const { 'x-api-key': _key, ...keyless } = valid().headers;
    add('no key', { ...valid(), path: validPath(), headers: d.int(2) ? keyless : { ...keyless, authorization: `Bearer ${d.word(30)}` }, expect: { status: 401, errorId: 'api_key_missing' } });
    add('wrong key', { path: validPath(), headers: { 'x-api-key': d.pick(['', ' ', `mk_${d.word(40)}`, opts.apiKey.slice(0, -1), `${opts.apiKey}x`, opts.apiKey.toUpperCase()]) }, expect: { status: 401, errorId: 'api_key_invalid' } });
  }
  // An API key in the URL is refused before anything else, on every path.
  const name = d.pick(KEY_PARAMETERS).replace(/./g, (c) => (d.int(2) ? c.toUpperCase() : c));
  add('key in the URL', { path: `${validPath()}?${encodeURIComponent(name)}=${d.word(20)}`, headers: key, expect: { status: 400, errorId: 'api_key_in_url' } });

  if (o.readerPage) {
    // A token that was never issued: the owner's plain 404 page (a POST /u needs a body the page reads).
    const post: { headers: Record<string, string>; body?: string } = o.method === 'POST' && o.path.startsWith('/u/') ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' } : { headers: {} };
    add('unknown token', { path: validPath(), ...post, expect: { status: 404 } });
    return cases;
  }
  if (o.open) return cases;

  // Query and path parameters.
  if (statusOf(400, 'unknown_property')) {
    const unknown = d.int(4) ? `${d.pick(['x', 'q', 'filter', 'sort', 'page', 'Status'])}${d.word(4)}` : d.pick(['a[b]', '%', 'pageSize[]', '__proto__']);
    if (!queryParams.some((p) => p.name === unknown)) add('unknown query parameter', { path: `${validPath()}?${unknown}=${d.word()}`, ...valid(), expect: { status: 400, errorId: 'unknown_property', detail: { path: `query.${unknown}` } } });
  }
  const badQuery = queryParams.map((p) => [p, badParameterValue(p, d)] as const).filter(([, bad]) => bad);
  if (badQuery.length) {
    const [p, bad] = d.pick(badQuery);
    // an integer given twice is refused as such
    const query = p.schema?.type === 'integer' && !d.int(3) ? `${p.name}=1&${p.name}=2` : `${p.name}=${encodeURIComponent(bad!.value)}`;
    add('bad query value', { path: `${validPath()}?${query}`, ...valid(), expect: { status: 400, errorId: bad!.errorId, detail: { path: `query.${p.name}` } } });
  }
  const badPath = pathParams.map((p) => [p, badParameterValue(p, d)] as const).filter(([, bad]) => bad);
  if (badPath.length) {
    const [p, bad] = d.pick(badPath);
    const values = Object.fromEntries(pathParams.map((q) => [q.name, q === p ? encodeURIComponent(bad!.value) : unknownPathValue(q, d)]));
    add('bad path value', { path: fill(values), ...valid(), expect: { status: 400, errorId: bad!.errorId, detail: { path: `path.${p.name}` } } });
  }
  if (pathParams.length) {
    const p = d.pick(pathParams);
    const values = Object.fromEntries(pathParams.map((q) => [q.name, q === p ? d.pick(['%zz', '%E0%A4%A', `${d.word()}%`]) : unknownPathValue(q, d)]));
    add('malformed percent-encoding', { path: fill(values), ...valid(), expect: { status: 400, errorId: 'validation_failed' } });
  }
  // Well-formed ids (or names) that name nothing in the account: the path's own resource, which the
  // document lists first, is not found (before anything the body refers to is looked up).
  const notFound = documentedErrorIds(doc, o.op, 404);
  if (pathParams.length && notFound.length) add('unknown resource', { path: validPath(), ...valid(), expect: { status: 404, errorId: notFound[0] } });

  // The body.
  if (media) {
    const limit = opts.bodyLimit(o.path);
    add('not JSON', { path: validPath(), headers: { ...key, 'content-type': d.pick(['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'text/html', `x-${d.word()}/${d.word()}`]) }, body: exampleText ?? '{}', expect: { status: 415, errorId: 'unsupported_media_type' } });
    withBody('not UTF-8 charset', { 'content-type': `application/json; charset=${d.pick(['latin1', 'iso-8859-1', 'utf-16le', 'windows-1252'])}` }, exampleText ?? '{}', { status: 415, errorId: 'unsupported_media_type' });
    withBody('unknown content encoding', { ...json, 'content-encoding': `x-${d.word()}` }, exampleText ?? '{}', { status: 415, errorId: 'unsupported_media_type' });
    const text = exampleText ?? '{"a":"b"}';
    withBody('truncated JSON', json, text.slice(0, 1 + d.int(text.length - 1)), { status: 400, errorId: 'malformed_json' });
    withBody('invalid UTF-8', json, Buffer.concat([Buffer.from('{"a":"x'), Buffer.from(d.pick(BAD_UTF8)), Buffer.from('y"}')]), { status: 400, errorId: 'malformed_json' });
    const depth = opts.maxDepth + 1 + d.int(5_000);
    withBody('nested too deep', json, d.int(2) ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth), { status: 400, errorId: 'json_too_deep' });
    withBody('too large', json, `{"a":"${'x'.repeat(limit + d.int(1_000))}"}`, { status: 413, errorId: 'payload_too_large' });
    if (o.op.requestBody.required) add('no body', { path: validPath(), headers: key, expect: { status: 400, errorId: 'validation_failed', detail: { path: 'body', problem: 'is required' } } });
    if (bodySchema?.type === 'object' && example && typeof example === 'object') {
      withBody('not an object', json, d.pick(['[]', '7', '"x"', 'true', 'null', '[{}]']), { status: 400, errorId: 'validation_failed', detail: { path: 'body' } });
      const props: Json = bodySchema.properties ?? {};
      const required = (bodySchema.required ?? []).filter((m: string) => m in example && resolve(doc, props[m])?.default === undefined);
      if (required.length && !bodySchema.oneOf && !bodySchema.anyOf) {
        const member = d.pick(required as string[]);
        const { [member]: _removed, ...rest } = example;
        withBody('required member missing', json, JSON.stringify(rest), { status: 400, errorId: 'validation_failed', detail: { path: `body.${member}`, problem: 'is required' } });
      }
      if (bodySchema.additionalProperties === false) {
        const unknown = d.pick(['__proto__', 'constructor', 'accountId', 'id', `${d.pick(['x', 'extra', 'Name'])}${d.word(4)}`]);
        // written as text: "__proto__" stays a member (an object literal would set the prototype)
        const member = `"${unknown}":${JSON.stringify(d.pick([1, 'x', null, {}, []]))}`;
        const text = Object.keys(example).length ? `{${member},${exampleText!.slice(1)}` : `{${member}}`;
        if (!(unknown in props)) withBody('unknown member', json, text, { status: 400, errorId: 'unknown_property', detail: { path: `body.${unknown}` } });
      }
      const typed = Object.keys(example).map((m) => [m, resolve(doc, props[m])] as const).map(([m, s]) => [m, s, wrongTyped(s, d)] as const).filter(([, , v]) => v !== undefined);
      if (typed.length) {
        const [member, schema, value] = d.pick(typed);
        const errorId = schema?.enum && schema['x-error-ids']?.enum ? schema['x-error-ids'].enum : 'validation_failed';
        withBody('member of the wrong type', json, JSON.stringify({ ...example, [member]: value }), { status: 400, errorId, detail: { path: `body.${member}` } });
      }
    }
  }
  if (o.method === 'POST' && statusOf(400, 'invalid_idempotency_key')) {
    // (the server trims spaces around a header value, so ' k' would be the valid key 'k')
    const bad = d.pick(['', 'x'.repeat(256 + d.int(100)), `k\u00e9${d.word()}`, `\u00a0${d.word()}`]);
    add('bad Idempotency-Key', { path: validPath(), body: exampleText, headers: { ...valid().headers, 'idempotency-key': bad }, expect: { status: 400, errorId: 'invalid_idempotency_key' } });
  }
  return cases;
}

/** A method the path does not have: 405 with Allow listing the ones it has. */
export function wrongMethodCase(doc: Json, path: string, random: Random, apiKey: string): Case | undefined {
  const d = draw(random);
  const item = doc.paths[path] as Json;
  const has = Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => m.toUpperCase());
  const missing = METHODS.map((m) => m.toUpperCase()).filter((m) => !has.includes(m));
  if (!missing.length || READER_PREFIXES.some((p) => path.startsWith(p))) return undefined;
  const values: Record<string, string> = {};
  for (const p of Object.values(item).flatMap((op) => parameters(doc, op as Json)).filter((p) => p.in === 'path')) values[p.name] ??= unknownPathValue(p, d);
  const allow = [...has, ...(has.includes('GET') ? ['HEAD'] : [])];
  return {
    operationId: (Object.values(item)[0] as Json).operationId,
    kind: 'method the path lacks',
    method: d.pick(missing),
    path: path.replace(/\{(\w+)\}/g, (_m, n) => values[n]),
    headers: { 'x-api-key': apiKey },
    expect: { status: 405, errorId: 'method_not_allowed', allow: allow.join(', ') },
  };
}

/** A path no operation has (the key is valid): 404 route_not_found. */
export function unknownPathCase(random: Random, apiKey: string): Case {
  const d = draw(random);
  const path = `/${d.pick(['x', 'api', 'v1', 'subscriber', 'admin', 'Subscribers'])}${d.word(4)}/${d.word()}${d.pick(['', '/', `?q=${d.word()}`])}`;
  return { operationId: '', kind: 'path outside the document', method: d.pick(['GET', 'POST', 'PUT', 'DELETE']), path, headers: { 'x-api-key': apiKey }, expect: { status: 404, errorId: 'route_not_found' } };
}
