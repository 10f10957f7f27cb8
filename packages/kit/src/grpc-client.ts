import {
  type CallOptions,
  type Client,
  type ClientUnaryCall,
  type ChannelCredentials,
  credentials,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { currentCall, REQUEST_ID_KEY } from './call-context';
import { outgoingServiceToken, SERVICE_TOKEN_KEY } from './service-token';

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

export interface CallSettings {
  deadlineMs?: number;
  metadata?: Record<string, string>;
}

/** The client's unary methods as promises; every call has a deadline. */
export type PromiseClient<C> = {
  [K in keyof C as C[K] extends UnaryMethod<any, any> ? K : never]: C[K] extends UnaryMethod<infer Req, infer Res>
    ? (request: Req, settings?: CallSettings) => Promise<Res>
    : never;
} & { close(): void; raw: C };

type ClientConstructor<C> = new (address: string, creds: ChannelCredentials, options?: object) => C;

/**
 * Creates one long-lived client for a service (create once per process: a channel multiplexes
 * every call). Keepalive keeps idle channels healthy; the server's max connection age makes them
 * reconnect, which is how calls spread over new pods.
 */
export function createClient<C extends Client>(Ctor: ClientConstructor<C>, address: string, defaultDeadlineMs = 5_000): PromiseClient<C> {
  const raw = new Ctor(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    // Channelz (call counters and traces for a channelz admin service nobody runs) costs its
    // bookkeeping on every call.
    'grpc.enable_channelz': 0,
  });
  const wrapped: Record<string, unknown> = { raw, close: () => raw.close() };
  const definition = (Ctor as unknown as { service: Record<string, unknown> }).service;
  for (const name of Object.keys(definition)) {
    const method = (raw as unknown as Record<string, UnaryMethod<unknown, unknown>>)[name];
    wrapped[name] = (request: unknown, settings: CallSettings = {}) =>
      new Promise((resolve, reject) => {
        const md = new Metadata();
        for (const [k, v] of Object.entries(settings.metadata ?? {})) md.set(k, v);
        // A call made while serving one carries its request id on, so one id follows a request through every service.
        const requestId = currentCall()?.requestId;
        if (requestId && !md.get(REQUEST_ID_KEY).length) md.set(REQUEST_ID_KEY, requestId);
        // Who is calling, signed (service-token.ts): servers that check refuse calls without it.
        const token = outgoingServiceToken();
        if (token) md.set(SERVICE_TOKEN_KEY, token);
        const deadline = new Date(Date.now() + (settings.deadlineMs ?? defaultDeadlineMs));
        method.call(raw, request, md, { deadline }, (err, res) => (err ? reject(err) : resolve(res)));
      });
  }
  return wrapped as PromiseClient<C>;
}
