import type { Request } from 'express';
import { requestValidator, type ItemError } from '../openapi/validator';

/**
 * The request's path parameters, query and body, validated against the named operation of the
 * OpenAPI document (defaults filled in). Throws the contract's 400 errors; `itemErrors` lists
 * refused items of a per-item validated body (sync rows), empty elsewhere.
 */
export function validated<B = unknown, Q = Record<string, unknown>, P = Record<string, string>>(operationId: string, req: Request) {
  const v = requestValidator(operationId)({ params: req.params, query: req.query, body: req.body });
  return v as { params: P; query: Q; body: B; itemErrors: ItemError[] };
}
