// Calls to a peer service (gateway -> service, service -> service): one mapping of their failures.
import type { ServiceError } from '@grpc/grpc-js';
import { DomainError, fromServiceError, GrpcStatus } from './errors';
import type { PromiseClient } from './grpc-client';
import type { Logger } from './logger';

/** Which peer a client talks to, and what its callers answer when it does not answer. */
export interface PeerSpec {
  /** Short name for logs, e.g. `segment`. */
  service: string;
  /** The errorId callers see, e.g. `segment_service_unavailable` (must be in the OpenAPI catalogue). */
  errorId: string;
  /**
   * Fixed text naming the capability that is missing, e.g. "The segment service is unavailable;
   * retry later." It reaches API clients, so it never carries hosts, ports or the transport's words.
   */
  message: string;
  /** Where the real cause is logged (warn); absent: whoever catches the error logs it. */
  logger?: Logger;
}

/**
 * The peer did not answer: down, unreachable, too slow, or the call was cut off. These are the codes
 * grpc-js itself produces for such failures; a peer's own errors always carry an errorId.
 */
const TRANSPORT_FAILURES: ReadonlySet<number> = new Set([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED, GrpcStatus.CANCELLED, GrpcStatus.UNKNOWN]);

/** A peer's transport failure as a DomainError; `failure` (the real cause) is for logs only. */
export class PeerUnavailable extends DomainError {
  constructor(
    readonly peer: string,
    errorId: string,
    message: string,
    readonly failure: { code: string; details: string },
  ) {
    super(GrpcStatus.UNAVAILABLE, errorId, message);
    this.name = 'PeerUnavailable';
  }
}

/**
 * What a failed peer call becomes: the peer's own DomainError passes through unchanged (its errorId,
 * status and client-facing text); a transport failure becomes PeerUnavailable with the peer's fixed
 * text (the cause is logged, never returned); anything else (a bug, a local grpc-js error) is
 * returned as it was, for the caller's usual handling of unexpected errors.
 */
export function peerFailure(peer: PeerSpec, err: unknown): unknown {
  if (err instanceof DomainError) return err;
  const e = err as Partial<ServiceError> | undefined;
  const domain = e && typeof e.code === 'number' && e.metadata ? fromServiceError(e as ServiceError) : undefined;
  if (domain) return domain;
  if (typeof e?.code !== 'number' || !TRANSPORT_FAILURES.has(e.code)) return err;
  const failure = { code: GrpcStatus[e.code] ?? String(e.code), details: String(e.details ?? e.message ?? '') };
  peer.logger?.warn({ peer: peer.service, ...failure }, `call to the ${peer.service} service failed`);
  return new PeerUnavailable(peer.service, peer.errorId, peer.message, failure);
}

/** Runs one call to a peer with peerFailure's mapping. */
export async function callPeer<T>(peer: PeerSpec, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw peerFailure(peer, err);
  }
}

/** The same client with every call mapped by peerFailure (create once, next to createClient). */
export function peerClient<C>(client: PromiseClient<C>, peer: PeerSpec): PromiseClient<C> {
  return new Proxy(client, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || name === 'close') return value;
      return (...args: unknown[]) => callPeer(peer, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}
