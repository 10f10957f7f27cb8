import type { Request } from 'express';
import { requestValidator } from '../openapi/validator';

/**
 * The request's path parameters, query and body, validated against the named operation of the
 * OpenAPI document (defaults filled in). Throws the contract's 400 errors.
 */
export function validated<B = unknown, Q = Record<string, unknown>, P = Record<string, string>>(operationId: string, req: Request) {
  const v = requestValidator(operationId)({ params: req.params, query: req.query, body: req.body });
  return v as { params: P; query: Q; body: B };
}
