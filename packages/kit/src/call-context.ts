// The request a gRPC handler is serving, carried through its async work (AsyncLocalStorage) so that
// handlers keep their (request, call) shape: code running inside a call asks for its logger here,
// and every outgoing gRPC call forwards the request id without each client passing it by hand.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from './logger';

/** gRPC metadata key (and HTTP header) of the request id; the gateway sets it on every call. */
export const REQUEST_ID_KEY = 'x-request-id';

export interface CallContext {
  requestId: string;
  /** Full gRPC method path, e.g. /mailer.subscriber.v1.SubscriberService/GetSubscriber. */
  rpc: string;
  /** The process logger bound to requestId and rpc. */
  log: Logger;
}

const storage = new AsyncLocalStorage<CallContext>();

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's request id when it is sane (1-128 of [A-Za-z0-9._:-]); otherwise a new UUID (never log what a client injected). */
export function sanitizeRequestId(value: unknown): string {
  return typeof value === 'string' && SANE_REQUEST_ID.test(value) ? value : randomUUID();
}

export function runInCall<T>(ctx: CallContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** The gRPC call being served, if any. */
export function currentCall(): CallContext | undefined {
  return storage.getStore();
}

/** The current call's logger (requestId, rpc), or `fallback` outside a call (consumers, start-up). */
export function callLogger(fallback: Logger): Logger {
  return storage.getStore()?.log ?? fallback;
}
