import type { Request } from 'express';
import type { BodyOf, OperationId, PathOf, QueryOf } from '../openapi/types';
import { requestValidator, type ItemError } from '../openapi/validator';

/**
 * The request's path parameters, query and body, validated against the named operation of the
 * OpenAPI document (defaults filled in) and typed from it. Throws the contract's 400 errors;
 * `itemErrors` lists refused items of a per-item validated body (sync rows), empty elsewhere.
 */
export function validated<K extends OperationId>(operationId: K, req: Request) {
  const v = requestValidator(operationId)({ params: req.params, query: req.query, body: req.body });
  return v as { params: PathOf<K>; query: QueryOf<K>; body: BodyOf<K>; itemErrors: ItemError[] };
}
