import { connect, type NatsConnection } from 'nats';
import { adminRequest, createAccount, gatewaySecrets, startGateway, startNatsServer, type GatewayHandle, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { schemaErrors } from '../../src/openapi/validator';

export { adminRequest, createAccount, startGateway, gatewaySecrets, type GatewayHandle };

export interface Stack {
  nats: NatsServerHandle;
  gateways: GatewayHandle[];
  /** A NATS client of the test itself (to read streams and KV directly). */
  nc: NatsConnection;
  stop(): Promise<void>;
}

/**
 * A real nats-server and `count` real gateway processes sharing it (and its secrets), as replicas
 * behind a load balancer would. Unauthenticated budgets are generous unless a test asks otherwise.
 */
export async function startStack(count = 1, env: NodeJS.ProcessEnv = {}): Promise<Stack> {
  const nats = await startNatsServer();
  const secrets = gatewaySecrets();
  const gateways: GatewayHandle[] = [];
  try {
    for (let i = 0; i < count; i++) {
      gateways.push(
        await startGateway({
          NATS_URL: nats.url,
          ...secrets,
          GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
          // Nothing listens here: routes that need the subscriber service answer 503.
          SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1',
          ...env,
        }),
      );
    }
  } catch (err) {
    await Promise.all(gateways.map((g) => g.stop()));
    await nats.stop();
    throw err;
  }
  const nc = await connect({ servers: nats.url, ...nats.auth });
  return {
    nats,
    gateways,
    nc,
    async stop() {
      await nc.close().catch(() => undefined);
      await Promise.all(gateways.map((g) => g.stop()));
      await nats.stop();
    },
  };
}

/**
 * A gateway in front of the services of `mesh`. When it does not start, the mesh, `more` (what else the
 * caller started) and the stack are stopped before the error goes on: a failed start leaves nothing
 * running (a process left behind would keep jest from exiting).
 */
export async function startMeshGateway(stack: Stack, mesh: ServiceMesh, env: NodeJS.ProcessEnv = {}, more: () => Promise<unknown> = async () => undefined): Promise<GatewayHandle> {
  try {
    return await startGateway({ NATS_URL: stack.nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000', ...env });
  } catch (err) {
    await mesh.stop();
    await more();
    await stack.stop();
    throw err;
  }
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  apiKey?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding, no content type unless given). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP call to a gateway; JSON bodies are encoded with Content-Type application/json. */
export async function call(base: string | GatewayHandle, method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const url = `${typeof base === 'string' ? base : base.url}${path}`;
  const headers: Record<string, string> = { ...(opts.apiKey !== undefined ? { 'x-api-key': opts.apiKey } : {}) };
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  Object.assign(headers, opts.headers);
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Asserts the response is an ErrorMessageDto with this status and errorId, and carries X-Request-Id. */
export function expectError(res: ApiResponse, status: number, errorId: string): void {
  // On failure the whole body is shown, not just the status.
  expect({ status: res.status, errorId: res.json?.errorId, body: res.text }).toMatchObject({ status, errorId });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(schemaErrors('ErrorMessageDto', res.json)).toEqual([]);
  expect(typeof res.json.message).toBe('string');
  expect(res.json.message).not.toMatch(/\bat .+\.(js|ts):\d+/); // no stack trace
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

/** A valid custom event body. */
export const event = (extra: Record<string, unknown> = {}) => ({ eventKey: 'order.paid', email: 'ann@example.org', ...extra });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every message stored on the EVENTS stream for an account (subject events.<accountId>), in order. */
export async function readEvents(nc: NatsConnection, accountId: string): Promise<Array<{ subject: string; data: any; msgId?: string }>> {
  const subject = `events.${accountId}`;
  // A generous API timeout: right after a NATS restart the server may take seconds to answer JetStream requests.
  const jsm = await nc.jetstreamManager({ timeout: 15_000 });
  const info = await jsm.streams.info('EVENTS', { subjects_filter: subject });
  const count = info.state.subjects?.[subject] ?? 0;
  const out: Array<{ subject: string; data: any; msgId?: string }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (count === 0) return out;
  const consumer = await nc.jetstream({ timeout: 15_000 }).consumers.get('EVENTS', { filterSubjects: subject });
  while (out.length < count) {
    const m = await consumer.next({ expires: 2_000 });
    if (!m) throw new Error(`expected ${count} messages on ${subject}, read ${out.length}`);
    out.push({ subject: m.subject, data: m.json(), msgId: m.headers?.get('Nats-Msg-Id') });
  }
  return out;
}

/** Waits for a log line of a gateway that satisfies `match` (logs arrive through a pipe, after the response). */
export async function waitForLog(gw: { output(): string }, match: (line: string) => boolean, timeoutMs = 3_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = gw.output().split('\n').find(match);
    if (line) return line;
    if (Date.now() > deadline) throw new Error('log line not found');
    await sleep(25);
  }
}
