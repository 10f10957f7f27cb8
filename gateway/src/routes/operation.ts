import type { IncomingHttpHeaders } from 'node:http';
import { Router } from 'express';
import type { CallSettings } from '@mailer/kit';
import type { ServiceClients } from '../clients';
import type { BodyOf, OperationId, PathOf, QueryOf } from '../openapi/types';
import { requestValidator, type ItemError, type RequestValidator } from '../openapi/validator';
import { OPERATION_DEADLINES } from './deadlines';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * What one operation's handler gets: the validated request, typed from the OpenAPI document by
 * operationId (openapi/types.ts), the account (from the key, never the request), and the services.
 */
export interface OperationInput<K extends OperationId> {
  accountId: string;
  body: BodyOf<K>;
  query: QueryOf<K>;
  /** Path parameters; ids (`...Id`) lowercased, since paths accept UUIDs in any case. */
  params: PathOf<K>;
  /** Items of a per-item validated body that the schema refused (sync rows); empty elsewhere. */
  itemErrors: ItemError[];
  /** The request's headers (lowercase names), for the few operations that read one (reports: Accept-Language). */
  headers: IncomingHttpHeaders;
  clients: ServiceClients;
  /** gRPC call settings carrying the request id (and the operation's deadline, routes/deadlines.ts). */
  call: CallSettings;
}

/** The HTTP answer of an operation: JSON body (none for 204) and, for creations, Location. */
export interface Reply {
  status: 200 | 201 | 202 | 204;
  body?: unknown;
  location?: string;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown, location: string): Reply => ({ status: 201, body, location });
export const noContent = (): Reply => ({ status: 204 });
export const accepted = (body: unknown): Reply => ({ status: 202, body });

/** One row of an the API contract table: method, Express path, the OpenAPI operation that validates it, and its handler. */
export interface Operation {
  method: HttpMethod;
  path: string;
  operationId: OperationId;
  handle(input: OperationInput<any>): Promise<Reply>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function operation<K extends OperationId>(method: HttpMethod, path: string, operationId: K, handle: (input: OperationInput<K>) => Promise<Reply>): Operation {
  return { method, path, operationId, handle };
}

/** The params with ids lowercased, in place (the validator's own copy). */
function lowerIds(params: Record<string, unknown>): Record<string, unknown> {
  for (const k in params) {
    const v = params[k];
    if (typeof v === 'string' && k.endsWith('Id')) params[k] = v.toLowerCase();
  }
  return params;
}

/**
 * A router serving the given operations, each validated against its OpenAPI operation first.
 * A literal path (`/subscribers/sync`) called with a method it does not have leaves the router
 * at once, before a parameter route (`/subscribers/:subscriberId`) could take it for an id: it
 * then gets 405 with Allow, not 400 invalid_uuid.
 */
export function mount(operations: Operation[], clients: ServiceClients): Router {
  const router = Router();
  const mounted = new Set<Operation>();
  for (const op of operations) {
    if (mounted.has(op)) continue;
    const literal = !op.path.includes(':');
    for (const o of literal ? operations.filter((x) => x.path === op.path) : [op]) {
      register(router, o, clients);
      mounted.add(o);
    }
    if (literal) router.all(op.path, (_req, _res, next) => next('router'));
  }
  return router;
}

function register(router: Router, op: Operation, clients: ServiceClients): void {
  let validator: RequestValidator | undefined; // compiled on the operation's first request
  const deadlineMs = OPERATION_DEADLINES[op.operationId];
  router[op.method](op.path, async (req, res) => {
    validator ??= requestValidator(op.operationId);
    const { params, query, body, itemErrors } = validator({ params: req.params, query: req.query, body: req.body });
    const reply = await op.handle({
      accountId: req.account!.accountId,
      params: lowerIds(params),
      query,
      body,
      itemErrors,
      headers: req.headers,
      clients,
      call: { metadata: { 'x-request-id': req.requestId }, deadlineMs },
    });
    if (reply.location) res.location(reply.location);
    if (reply.status === 204) res.status(204).end();
    else res.status(reply.status).json(reply.body);
  });
}
