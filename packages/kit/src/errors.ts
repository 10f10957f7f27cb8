import { Metadata, status } from '@grpc/grpc-js';

export { status as GrpcStatus };

/** A problem with one part of a request, as the gateway returns it in `details`. */
export interface Problem {
  path: string;
  problem: string;
}

/**
 * A domain error a service raises on purpose. It crosses gRPC as a status code plus the
 * stable `errorId` (and optional problems) in trailing metadata; the gateway maps it to HTTP
 * in one place. Anything else a handler throws becomes INTERNAL with no details leaked.
 */
export class DomainError extends Error {
  constructor(
    readonly code: status,
    readonly errorId: string,
    message: string,
    readonly details?: Problem[],
  ) {
    super(message);
    this.name = 'DomainError';
  }

  toMetadata(): Metadata {
    const md = new Metadata();
    md.set(ERROR_ID_KEY, this.errorId);
    if (this.details?.length) md.set(ERROR_DETAILS_KEY, JSON.stringify(this.details));
    return md;
  }
}

export const ERROR_ID_KEY = 'x-error-id';
export const ERROR_DETAILS_KEY = 'x-error-details';

export const invalid = (errorId: string, message: string, details?: Problem[]) =>
  new DomainError(status.INVALID_ARGUMENT, errorId, message, details);
export const notFound = (errorId: string, message: string) => new DomainError(status.NOT_FOUND, errorId, message);
export const conflict = (errorId: string, message: string, details?: Problem[]) =>
  new DomainError(status.ALREADY_EXISTS, errorId, message, details);
export const failedPrecondition = (errorId: string, message: string, details?: Problem[]) =>
  new DomainError(status.FAILED_PRECONDITION, errorId, message, details);

/** Reads a DomainError back out of a gRPC client error (gateway side). */
/**
 * The accountId of a service request. The account comes from the API key (the gateway fills it in);
 * a request without one is a caller bug, refused.
 */
export function accountOf(req: { accountId: string }): string {
  const id = req.accountId ?? '';
  if (id.length === 0 || id.length > 100) throw invalid('validation_failed', 'accountId is required', [{ path: 'accountId', problem: 'required' }]);
  return id;
}

export function fromServiceError(err: { code?: number; details?: string; metadata?: Metadata }): DomainError | undefined {
  const errorId = err.metadata?.get(ERROR_ID_KEY)[0];
  if (typeof errorId !== 'string' || err.code === undefined) return undefined;
  const raw = err.metadata?.get(ERROR_DETAILS_KEY)[0];
  let details: Problem[] | undefined;
  if (typeof raw === 'string') {
    try {
      details = JSON.parse(raw);
    } catch {
      details = undefined;
    }
  }
  return new DomainError(err.code, errorId, err.details ?? '', details);
}
