import { Metadata } from '@grpc/grpc-js';
import { DomainError, GrpcStatus, PeerUnavailable } from '@mailer/kit';
import { ApiError, ERROR_CATALOGUE, fromGrpcError, StoreUnavailable, toApiError } from '../src/errors';

/** A gRPC client error as grpc-js produces it, optionally carrying a service DomainError. */
function grpcError(code: GrpcStatus, errorId?: string, details?: string, problems?: unknown) {
  const metadata = errorId ? new DomainError(code, errorId, details ?? '', problems as never).toMetadata() : new Metadata();
  return Object.assign(new Error(`${code} ${details}`), { code, details: details ?? 'internal stack at x.ts:1', metadata });
}

describe('gRPC -> HTTP mapping (one place)', () => {
  it.each([
    [GrpcStatus.INVALID_ARGUMENT, 400],
    [GrpcStatus.NOT_FOUND, 404],
    [GrpcStatus.ALREADY_EXISTS, 409],
    [GrpcStatus.ABORTED, 409],
    [GrpcStatus.FAILED_PRECONDITION, 409],
    [GrpcStatus.PERMISSION_DENIED, 403],
    [GrpcStatus.RESOURCE_EXHAUSTED, 429],
  ])('code %s with a domain errorId -> %s with that errorId and message', (code, status) => {
    const e = fromGrpcError(grpcError(code, 'some_error', 'Human text.', [{ path: 'body.email', problem: 'bad' }]))!;
    expect(e.status).toBe(status);
    expect(e.toDto()).toEqual({ errorId: 'some_error', message: 'Human text.', details: [{ path: 'body.email', problem: 'bad' }] });
  });

  it.each([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED])('code %s -> 503 service_unavailable', (code) => {
    const e = fromGrpcError(grpcError(code))!;
    expect(e.status).toBe(503);
    expect(e.errorId).toBe('service_unavailable');
  });

  it.each([GrpcStatus.INTERNAL, GrpcStatus.UNKNOWN, GrpcStatus.UNIMPLEMENTED, GrpcStatus.DATA_LOSS, GrpcStatus.UNAUTHENTICATED])(
    'code %s -> 500 internal_error without the service text, even with an errorId',
    (code) => {
      const e = fromGrpcError(grpcError(code, 'leaky', 'secret stack trace'))!;
      expect(e.status).toBe(500);
      expect(e.toDto()).toEqual({ errorId: 'internal_error', message: expect.not.stringContaining('stack') });
    },
  );

  it('a service client\'s PeerUnavailable (transport failure) -> 503 with its fixed text, never the transport details', () => {
    const e = fromGrpcError(new PeerUnavailable('segment', 'service_unavailable', 'The segment service is unavailable; retry later.', { code: 'UNAVAILABLE', details: 'connect ECONNREFUSED 127.0.0.1:50052' }))!;
    expect(e.status).toBe(503);
    expect(e.toDto()).toEqual({ errorId: 'service_unavailable', message: 'The segment service is unavailable; retry later.' });
    expect(fromGrpcError(new DomainError(GrpcStatus.NOT_FOUND, 'topic_not_found', 'no topic'))!.toDto()).toEqual({ errorId: 'topic_not_found', message: 'no topic' });
  });

  it('a catalogued errorId keeps the catalogue\'s 4xx status whatever 4xx code carried it (gRPC has no 422)', () => {
    const e = fromGrpcError(grpcError(GrpcStatus.INVALID_ARGUMENT, 'template_render_failed', 'html: template render limit exceeded', [{ path: 'html', problem: 'x' }]))!;
    expect([e.status, e.errorId, e.details]).toEqual([422, 'template_render_failed', [{ path: 'html', problem: 'x' }]]);
    expect(fromGrpcError(grpcError(GrpcStatus.FAILED_PRECONDITION, 'sender_profile_in_use', 'in use'))!.status).toBe(409);
    // 5xx codes are never turned into a 4xx by the catalogue.
    expect(fromGrpcError(grpcError(GrpcStatus.INTERNAL, 'template_render_failed', 'boom'))!.status).toBe(500);
  });

  it('a 4xx code without an errorId is a service bug -> 500', () => {
    expect(fromGrpcError(grpcError(GrpcStatus.NOT_FOUND))!.status).toBe(500);
  });

  it('non-gRPC values are not mapped by fromGrpcError', () => {
    expect(fromGrpcError(new Error('x'))).toBeUndefined();
    expect(fromGrpcError({ code: 'ECONNRESET' })).toBeUndefined();
    expect(fromGrpcError(null)).toBeUndefined();
  });
});

describe('toApiError', () => {
  it('keeps ApiErrors and maps store failures to 503', () => {
    const e = new ApiError(418, 'x', 'y');
    expect(toApiError(e)).toBe(e);
    expect(toApiError(new StoreUnavailable('kv get', new Error('timeout'))).errorId).toBe('service_unavailable');
  });

  it.each([
    [{ type: 'entity.parse.failed', status: 400 }, 400, 'malformed_json'],
    [{ type: 'entity.too.large', status: 413 }, 413, 'payload_too_large'],
    [{ type: 'encoding.unsupported', status: 415 }, 415, 'unsupported_media_type'],
    [{ type: 'charset.unsupported', status: 415 }, 415, 'unsupported_media_type'],
    [{ type: 'request.aborted', status: 400 }, 400, 'validation_failed'],
    [{ status: 400 }, 400, 'validation_failed'],
    [new TypeError('boom'), 500, 'internal_error'],
    ['a string', 500, 'internal_error'],
    [undefined, 500, 'internal_error'],
  ])('%p -> %s %s', (err, status, errorId) => {
    const e = toApiError(err);
    expect([e.status, e.errorId]).toEqual([status, errorId]);
    expect(e.message).not.toMatch(/boom|stack/);
  });

  it('every errorId the gateway emits by itself is in the published catalogue', () => {
    const ids = new Set(ERROR_CATALOGUE.map((e) => e.errorId));
    for (const err of [{ type: 'entity.parse.failed' }, { type: 'entity.too.large' }, { type: 'charset.unsupported' }, { status: 400 }, new Error()]) {
      expect(ids).toContain(toApiError(err).errorId);
    }
    for (const e of ERROR_CATALOGUE) expect(e.errorId).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it('omits details when there are none', () => {
    expect(new ApiError(400, 'a', 'b').toDto()).toEqual({ errorId: 'a', message: 'b' });
    expect(new ApiError(400, 'a', 'b', []).toDto()).toEqual({ errorId: 'a', message: 'b' });
  });
});
