// Building blocks of the OpenAPI document (document.ts and the per-domain path modules).

export type Json = Record<string, unknown>;

export const ref = (kind: 'schemas' | 'parameters' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });
export const schemaRef = (name: string) => ref('schemas', name);
export const json = (schema: Json) => ({ 'application/json': { schema } });

export const uuid = { type: 'string', format: 'uuid', examples: ['3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21'] };
export const instant = { type: 'string', format: 'date-time', description: 'UTC instant, ISO 8601 with `Z`.' };
/**
 * A JSON object of any members (template values, event properties of a message). `additionalProperties:
 * true` says so to generators too: without it openapi-typescript types the object as having no members
 * at all, and a typed client could not send one.
 */
export const freeFormObject = (description: string) => ({ type: ['object', 'null'], additionalProperties: true, description });

export const rateLimitHeaders = {
  'RateLimit-Limit': ref('headers', 'RateLimitLimit'),
  'RateLimit-Remaining': ref('headers', 'RateLimitRemaining'),
  'RateLimit-Reset': ref('headers', 'RateLimitReset'),
  'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
};
export const commonHeaders = { 'X-Request-Id': ref('headers', 'XRequestId'), ...rateLimitHeaders };

/** A success response of an authenticated operation (with the headers every response carries). */
export function ok(description: string, schema: Json | undefined, extraHeaders: Json = {}) {
  return {
    description,
    headers: { ...commonHeaders, ...extraHeaders },
    ...(schema ? { content: json(schema) } : {}),
  };
}

/** Error responses every authenticated operation can give. */
export const authenticatedErrors = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '429': ref('responses', 'TooManyRequests'),
  '500': ref('responses', 'InternalError'),
  '503': ref('responses', 'ServiceUnavailable'),
};
/** ... and those of operations with a JSON body (every POST also takes Idempotency-Key). */
export const bodyErrors = {
  '409': ref('responses', 'Conflict'),
  '413': ref('responses', 'PayloadTooLarge'),
  '415': ref('responses', 'UnsupportedMediaType'),
  '422': ref('responses', 'IdempotencyKeyReused'),
};

/** An error response whose description ends with the errorIds it can carry (tests read that line). */
export function errorResponse(description: string, errorIds: string[], extraHeaders: Json = {}) {
  return {
    description: `${description}\n\nerrorId: ${errorIds.map((id) => `\`${id}\``).join(', ')}`,
    headers: { 'X-Request-Id': ref('headers', 'XRequestId'), ...extraHeaders },
    content: json(schemaRef('ErrorMessageDto')),
  };
}

/** The answer on every path, operations without other input included, to a key in the URL. */
export const keyInUrlError = () => errorResponse('An API key in the URL: refused before anything else, as on every path (rotate that key).', ['api_key_in_url']);
