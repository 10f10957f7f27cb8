import { errorResponse, json, ok, rateLimitHeaders, ref, schemaRef, type Json } from './common';

/**
 * Building blocks of operations shared by every resource of the document: the responses of one
 * operation (generic errorIds of its kind plus its own), the usual success responses and bodies.
 */

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface ErrorIds {
  400?: string[];
  404?: string[];
  409?: string[];
}

/**
 * The responses of one operation: its success response, and error responses listing every errorId
 * it can answer (the generic ones of its kind plus the operation's own).
 */
export function responses(method: Method, success: Record<string, unknown>, errs: ErrorIds, opts: { body?: boolean; maxBody?: string } = {}) {
  const hasBody = opts.body ?? (method === 'post' || method === 'put' || method === 'patch');
  const bad = [
    'validation_failed',
    'unknown_property',
    ...(hasBody ? ['malformed_json', 'json_too_deep'] : []),
    ...(method === 'post' ? ['invalid_idempotency_key'] : []),
    'api_key_in_url',
    ...(errs[400] ?? []),
  ];
  const conflicts = [...(errs[409] ?? []), ...(method === 'post' ? ['idempotency_in_progress'] : [])];
  return {
    ...success,
    '400': errorResponse('The request does not satisfy the operation contract; `details` lists each problem.', unique(bad), rateLimitHeaders),
    '401': ref('responses', 'Unauthorized'),
    ...(errs[404]?.length
      ? { '404': errorResponse('The resource, or a resource the request refers to, does not exist in the account (ids of other accounts included).', errs[404], rateLimitHeaders) }
      : {}),
    ...(conflicts.length
      ? {
          '409': errorResponse(
            'Conflict with the current state' + (method === 'post' ? ', or the same Idempotency-Key is still in flight (then with Retry-After: 1)' : '') + '.',
            conflicts,
            method === 'post' ? { ...rateLimitHeaders, 'Retry-After': ref('headers', 'RetryAfter') } : rateLimitHeaders,
          ),
        }
      : {}),
    ...(hasBody
      ? {
          '413': errorResponse(`The body is over ${opts.maxBody ?? '1 MiB'}.`, ['payload_too_large'], rateLimitHeaders),
          '415': ref('responses', 'UnsupportedMediaType'),
        }
      : {}),
    ...(method === 'post' ? { '422': ref('responses', 'IdempotencyKeyReused') } : {}),
    '429': ref('responses', 'TooManyRequests'),
    '500': ref('responses', 'InternalError'),
    '503': ref('responses', 'ServiceUnavailable'),
  };
}

const unique = (xs: string[]) => [...new Set(xs)];

export const idempotencyKey = ref('parameters', 'IdempotencyKey');
export const created = (description: string, schema: string) =>
  ok(description, schemaRef(schema), { Location: ref('headers', 'Location'), 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') });
export const posted = (description: string, schema: string) => ok(description, schemaRef(schema), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') });
export const noContent = (description: string) => ok(description, undefined);
export const body = (schema: string, required = true) => ({ required, content: json(schemaRef(schema)) });

/** A closed object schema: unknown members are refused (`400 unknown_property`). */
export const object = (required: string[], properties: Json, extra: Json = {}) => ({ type: 'object', required, properties, additionalProperties: false, ...extra });
