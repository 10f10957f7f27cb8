// JetStream API error codes (server `err_code`), stable across server versions unlike the messages.
export const JS_ERR = {
  STREAM_NOT_FOUND: 10059,
  STREAM_NAME_IN_USE: 10058,
  CONSUMER_NOT_FOUND: 10014,
} as const;

export function apiErrCode(err: unknown): number | undefined {
  const api = (err as { api_error?: { err_code?: number } } | undefined)?.api_error;
  return typeof api?.err_code === 'number' ? api.err_code : undefined;
}

/** NATS cannot be reached now (disconnected, or its streams and buckets not restored yet): retry later. */
export class NatsUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsUnavailable';
  }
}
