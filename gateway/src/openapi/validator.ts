import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ApiError, type Problem } from '../errors';
import { refuseReservedMember } from '../middleware/json-scan';
import { openApiDocument } from './document';
import { ERROR_IDS_KEYWORD, PER_ITEM_KEYWORD } from './keywords';

/**
 * Request validation compiled from the OpenAPI document (the one source of schemas), with
 * Ajv's JSON Schema 2020-12 dialect, which OpenAPI 3.1 schemas are. Ajv's errors are turned into
 * the contract's errorIds here, the first that applies winning:
 *   additionalProperties                    -> 400 unknown_property (naming the member)
 *   a keyword named in the schema's `x-error-ids` (e.g. `{maxItems: "sync_too_many_rows"}`) -> that id
 *   uniqueItems                             -> 400 duplicate_ids (id arrays; the service answers the same)
 *   format uuid                             -> 400 invalid_uuid
 *   format email                            -> 400 invalid_email
 *   anything else                           -> 400 validation_failed
 * with every problem in `details` as {path, problem}, path being `body.a.b[2]`, `query.x`, `path.x`.
 * Discriminated unions (`discriminator` + `oneOf`, the field values) check only the branch the
 * discriminator names, so a wrong member of one kind is not reported as unknown in the others.
 */

const DOCUMENT_ID = 'https://mailer.invalid/openapi.json';
type Location = 'body' | 'query' | 'path';
type Schema = Record<string, unknown>;

function createAjv(coerceTypes: boolean) {
  // verbose: errors carry their schema, where `x-error-ids` is read.
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: true, coerceTypes, discriminator: true, verbose: true });
  addFormats(ajv);
  ajv.addKeyword({ keyword: ERROR_IDS_KEYWORD, schemaType: 'object' });
  // The document is registered whole so `#/components/...` references resolve; `components` is
  // an OpenAPI member, not a JSON Schema keyword.
  ajv.addKeyword('components');
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: forAjv(openApiDocument.components.schemas) } });
  return ajv;
}

/**
 * The schemas as Ajv takes them. The document's discriminated unions carry a `mapping` (for
 * generated clients); Ajv refuses it ("mapping is not supported") and derives the same one from
 * each variant's `kind` const, so it is dropped, and its keys become an enum of the tag property:
 * an unknown kind is then reported at `<path>.kind` (the discriminator alone only fails as a whole).
 */
function forAjv<T>(schemas: T): T {
  return JSON.parse(JSON.stringify(schemas), (_key, value) => {
    const mapping = value?.discriminator?.mapping as Record<string, string> | undefined;
    if (!mapping) return value;
    const tag = value.discriminator.propertyName as string;
    return { ...value, properties: { ...value.properties, [tag]: { enum: Object.keys(mapping) } }, discriminator: { propertyName: tag } };
  });
}

// Bodies are JSON and must have the right types; query and path values are strings and are coerced.
const bodyAjv = createAjv(false);
const paramAjv = createAjv(true);

/** A schema of the document made usable outside it: local references point into the registered document. */
function absolute<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOCUMENT_ID}${value}` : value,
  );
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

function resolveParameter(p: unknown): Parameter {
  const r = (p as { $ref?: string }).$ref;
  if (!r) return p as Parameter;
  const name = r.replace('#/components/parameters/', '');
  return (openApiDocument.components.parameters as Record<string, unknown>)[name] as Parameter;
}

interface OperationSchemas {
  parameters: Parameter[];
  body?: Schema;
  bodyRequired: boolean;
  perItem?: string;
}

function operations(): Map<string, OperationSchemas> {
  const out = new Map<string, OperationSchemas>();
  for (const item of Object.values(openApiDocument.paths as Record<string, Record<string, unknown>>)) {
    for (const op of Object.values(item) as Array<Record<string, unknown>>) {
      const body = op.requestBody as { required?: boolean; content?: Record<string, { schema: Schema }>; [PER_ITEM_KEYWORD]?: string } | undefined;
      out.set(op.operationId as string, {
        parameters: ((op.parameters as unknown[]) ?? []).map(resolveParameter),
        body: body?.content?.['application/json']?.schema,
        bodyRequired: body?.required ?? false,
        perItem: body?.[PER_ITEM_KEYWORD],
      });
    }
  }
  return out;
}

function objectSchema(params: Parameter[]): Schema {
  return absolute({
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required).map((p) => p.name),
    additionalProperties: false,
  });
}

/** An item of a per-item validated array that failed, with the error it would have answered alone. */
export interface ItemError {
  index: number;
  error: ApiError;
}

export interface RequestValidator {
  /**
   * Validates (and fills defaults into) the given values; throws ApiError on the first failing
   * location. For an operation whose requestBody names an array in `x-validated-per-item` (sync),
   * problems inside single items do not fail the request: they are returned in `itemErrors`
   * (one bad row never spoils the others); problems outside the items still throw.
   */
  (input: { params?: object; query?: object; body?: unknown }): {
    params: Record<string, unknown>;
    query: Record<string, unknown>;
    body: unknown;
    itemErrors: ItemError[];
  };
}

const compiled = new Map<string, RequestValidator>();

/** The validator of one operation of the document (by operationId), compiled once. */
export function requestValidator(operationId: string): RequestValidator {
  const cached = compiled.get(operationId);
  if (cached) return cached;
  const op = operations().get(operationId);
  if (!op) throw new Error(`no operation ${operationId} in the OpenAPI document`);
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const pathCheck = paramAjv.compile(objectSchema(pathParams));
  const queryCheck = paramAjv.compile(objectSchema(queryParams));
  const pathIntegers = integerParameters(pathParams);
  const queryIntegers = integerParameters(queryParams);
  const bodyCheck = op.body ? bodyAjv.compile(absolute(op.body)) : undefined;

  const validator: RequestValidator = (input) => {
    const params = { ...(input.params ?? {}) } as Record<string, unknown>;
    const query = { ...(input.query ?? {}) } as Record<string, unknown>;
    strictIntegers(pathIntegers, params, 'path');
    strictIntegers(queryIntegers, query, 'query');
    run(pathCheck, params, 'path');
    run(queryCheck, query, 'query');
    let body = input.body;
    let itemErrors: ItemError[] = [];
    if (bodyCheck) {
      if (body === undefined) {
        if (op.bodyRequired) throw new ApiError(400, 'validation_failed', 'A JSON request body is required.', [{ path: 'body', problem: 'is required' }]);
      } else if (op.perItem) {
        itemErrors = runPerItem(bodyCheck, body, op.perItem);
      } else {
        run(bodyCheck, body, 'body');
      }
    } else if (body !== undefined && !(typeof body === 'object' && body !== null && Object.keys(body).length === 0)) {
      body = undefined; // operations without a body ignore one (an empty `{}` from a client library is common)
    }
    refuseReservedMember(body);
    return { params, query, body, itemErrors };
  };
  compiled.set(operationId, validator);
  return validator;
}

interface IntegerParameter {
  name: string;
  minimum?: number;
  maximum?: number;
}

/** The integer parameters of a location; a `number` parameter has no strict parser yet, so none may be declared. */
function integerParameters(params: Parameter[]): IntegerParameter[] {
  const out: IntegerParameter[] = [];
  for (const p of params) {
    const { type, minimum, maximum } = p.schema as { type?: unknown; minimum?: number; maximum?: number };
    if (type === 'number') throw new Error(`parameter ${p.name}: only integer parameters are parsed strictly; add a parser for numbers`);
    if (type === 'integer') out.push({ name: p.name, minimum, maximum });
  }
  return out;
}

const DECIMAL_INTEGER = /^-?[0-9]+$/;

/**
 * Integer query and path values are parsed here, not by Ajv's coercion: it takes anything
 * `Number()` takes (`0x10`, `+5`, ` 5`, `1e2`) and lets `1e309` / `Infinity` through as Infinity,
 * which then fails the gRPC serialization (int32) as a 500. Only plain decimal integers within the
 * declared range are accepted; the value is replaced by the number, which Ajv then checks as is.
 */
function strictIntegers(params: IntegerParameter[], values: Record<string, unknown>, location: 'path' | 'query'): void {
  const problems: Problem[] = [];
  for (const p of params) {
    const raw = values[p.name];
    if (raw === undefined) continue;
    const path = `${location}.${p.name}`;
    const range = rangeText(p);
    if (typeof raw !== 'string') {
      problems.push({ path, problem: `must be given once, as a decimal integer${range}` }); // repeated (?a=1&a=2) or a[b]=
      continue;
    }
    const n = DECIMAL_INTEGER.test(raw) ? Number(raw) : NaN;
    if (Number.isNaN(n)) problems.push({ path, problem: `must be a decimal integer${range} (digits only)` });
    else if (!Number.isSafeInteger(n) || (p.minimum !== undefined && n < p.minimum) || (p.maximum !== undefined && n > p.maximum)) {
      problems.push({ path, problem: `must be an integer${range || ' of at most 15 digits'}` });
    } else values[p.name] = n;
  }
  if (problems.length) throw new ApiError(400, 'validation_failed', `${problems[0].path} ${problems[0].problem}.`, problems);
}

function rangeText({ minimum, maximum }: IntegerParameter): string {
  if (minimum !== undefined && maximum !== undefined) return ` from ${minimum} to ${maximum}`;
  if (minimum !== undefined) return ` of at least ${minimum}`;
  if (maximum !== undefined) return ` of at most ${maximum}`;
  return '';
}

function run(check: ValidateFunction, value: unknown, location: Location): void {
  if (!check(value)) throw validationError(check.errors ?? [], location);
}

/** Body validation where problems inside `body[member][i]` belong to item i (see RequestValidator). */
function runPerItem(check: ValidateFunction, body: unknown, member: string): ItemError[] {
  if (check(body)) return [];
  const itemPath = new RegExp(`^/${member}/(\\d+)(?:/|$)`);
  const byItem = new Map<number, ErrorObject[]>();
  const outside: ErrorObject[] = [];
  for (const e of check.errors ?? []) {
    const m = itemPath.exec(e.instancePath);
    if (!m) {
      outside.push(e);
      continue;
    }
    const index = Number(m[1]);
    byItem.set(index, [...(byItem.get(index) ?? []), e]);
  }
  // A problem of the request itself (too many rows, a bad mode) fails it as a whole, reported alone.
  if (outside.length) throw validationError(outside, 'body');
  return [...byItem].sort(([a], [b]) => a - b).map(([index, errors]) => ({ index, error: validationError(errors, 'body') }));
}

/** A JSON pointer (`/consent/givenAt`, `/items/3`) as `body.consent.givenAt` / `body.items[3]`. */
export function problemPath(location: Location, pointer: string, member?: string): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (member !== undefined) parts.push(member);
  let out: string = location;
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : `.${part}`;
  return out;
}

const MAX_DETAILS = 20;
const INTEGER_FORMATS: Record<string, string> = {
  int32: 'must be an integer from -2147483648 to 2147483647',
  int64: 'must be an integer from -9007199254740991 to 9007199254740991',
};

/** Ajv errors -> the contract's ApiError (see the header comment for the mapping). */
export function validationError(errors: ErrorObject[], location: Location): ApiError {
  const problems: Array<Problem & { errorId: string; specific?: boolean }> = [];
  for (const e of errors) {
    const declared = (e.parentSchema as Record<string, Record<string, string> | undefined> | undefined)?.[ERROR_IDS_KEYWORD]?.[e.keyword];
    if (declared) {
      problems.push({ errorId: declared, specific: true, path: problemPath(location, e.instancePath), problem: e.message ?? 'is invalid' });
    } else if (e.keyword === 'uniqueItems') {
      const { i, j } = e.params as { i: number; j: number };
      problems.push({ errorId: 'duplicate_ids', specific: true, path: problemPath(location, e.instancePath), problem: `holds the same id twice (items ${Math.min(i, j)} and ${Math.max(i, j)})` });
    } else if (e.keyword === 'additionalProperties') {
      const member = String((e.params as { additionalProperty: string }).additionalProperty);
      problems.push({ errorId: 'unknown_property', path: problemPath(location, e.instancePath, member), problem: 'is not a known property' });
    } else if (e.keyword === 'required') {
      const member = String((e.params as { missingProperty: string }).missingProperty);
      problems.push({ errorId: 'validation_failed', path: problemPath(location, e.instancePath, member), problem: 'is required' });
    } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'uuid') {
      problems.push({ errorId: 'invalid_uuid', path: problemPath(location, e.instancePath), problem: 'must be a UUID' });
    } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'email') {
      problems.push({ errorId: 'invalid_email', path: problemPath(location, e.instancePath), problem: 'must be a valid email address' });
    } else if (e.keyword === 'type' && typeof e.data === 'number' && !Number.isFinite(e.data)) {
      // JSON.parse reads a number beyond the double range (1e400, 400 digits) as Infinity.
      problems.push({ errorId: 'validation_failed', path: problemPath(location, e.instancePath), problem: 'is a number out of range (beyond ±1.8e308)' });
    } else if (e.keyword === 'format' && INTEGER_FORMATS[(e.params as { format: string }).format]) {
      problems.push({ errorId: 'validation_failed', path: problemPath(location, e.instancePath), problem: INTEGER_FORMATS[(e.params as { format: string }).format] });
    } else if (e.keyword === 'if' || e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'discriminator') {
      continue; // summaries of the branch errors listed separately
    } else {
      problems.push({ errorId: 'validation_failed', path: problemPath(location, e.instancePath), problem: e.message ?? 'is invalid' });
    }
  }
  const unique = problems.filter((p, i) => problems.findIndex((q) => q.path === p.path && q.problem === p.problem) === i);
  const details = unique.slice(0, MAX_DETAILS).map(({ path, problem }) => ({ path, problem }));
  const pick = (id: string) => unique.find((p) => p.errorId === id);
  const unknown = pick('unknown_property');
  if (unknown) return new ApiError(400, 'unknown_property', `Unknown property ${unknown.path}.`, details);
  const specific = unique.find((p) => p.specific);
  if (specific) return new ApiError(400, specific.errorId, `${specific.path} ${specific.problem}.`, details);
  const uuid = pick('invalid_uuid');
  if (uuid) return new ApiError(400, 'invalid_uuid', `${uuid.path} must be a UUID.`, details);
  const email = pick('invalid_email');
  if (email) return new ApiError(400, 'invalid_email', `${email.path} must be a valid email address.`, details);
  const first = unique[0];
  return new ApiError(400, 'validation_failed', first ? `${first.path} ${first.problem}.` : 'The request is invalid.', details);
}

/** Validates a value against a named schema of the document (tests use it on response bodies). */
export function schemaErrors(schemaName: string, value: unknown): ErrorObject[] {
  const check = bodyAjv.getSchema(`${DOCUMENT_ID}#/components/schemas/${schemaName}`);
  if (!check) throw new Error(`no schema ${schemaName}`);
  return check(structuredClone(value)) ? [] : (check.errors ?? []);
}
