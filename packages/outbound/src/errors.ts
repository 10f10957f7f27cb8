// Why an outbound call was refused or failed. `message` is written for the customer (it ends up in a
// delivery log or a feed's status): it names the kind of failure, never an internal address or a stack.
export type OutboundErrorCode =
  | 'url_not_allowed' // not a URL, a scheme other than https (http only when allowed), credentials in it
  | 'address_not_allowed' // the host is, or resolves to, or connected to a non-public address
  | 'dns_failed' // the host name does not resolve
  | 'timeout' // no complete answer within timeoutMs (connect, headers and body together)
  | 'connection_failed' // refused, reset, unreachable
  | 'tls_failed' // certificate or handshake failure
  | 'response_too_large'; // the body exceeded maxResponseBytes and the caller asked to fail on that

export class OutboundError extends Error {
  override readonly name = 'OutboundError';
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const isOutboundError = (err: unknown): err is OutboundError => err instanceof OutboundError;
