import { adminRequest, startMesh, waitForSettled, type RunningService, type ServiceMesh, type ServiceName } from '@mailer/testing';
import { startFaultyFieldUsagePeer, type FaultyFieldUsagePeer } from './faulty-peer';
import { call, createAccount, startMeshGateway, startStack, type ApiResponse, type GatewayHandle, type Stack } from './harness';

/**
 * The subscriber domain end to end: a real nats-server, the real subscriber service process, the real
 * services a test asks for (`peers`) and a real gateway. The four services the subscriber service asks
 * for field usages (and rss and messaging for references to a topic) answer from what the test created
 * through the API; one not started answers nothing (its usage source reports unknown).
 */
export interface SubscriberStack {
  stack: Stack;
  mesh: ServiceMesh;
  subscriber: RunningService;
  /** The real segment service, when it is among the peers. */
  segment?: RunningService;
  gw: GatewayHandle;
  /** The fault-injecting peers in front of the usage sources named in `faulty`. */
  faulty: Partial<Record<UsageSourceName, FaultyFieldUsagePeer>>;
  /** A new account (with limits high enough for a test's burst of requests) and its API client. */
  account(name: string): Promise<Api>;
  /** The barrier before counting: JetStream consumers and the services' outboxes idle. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export const USAGE_SOURCES = ['segment', 'form', 'rss', 'messaging'] as const;
export type UsageSourceName = (typeof USAGE_SOURCES)[number];

/**
 * `peers`: the real services started besides the subscriber service (USAGE_SOURCES for every field
 * usage source). `faulty`: usage sources the subscriber service reaches through a fault-injecting peer
 * (forwarding to the real one) so a test can make one fail for a field.
 */
export async function startSubscriberStack(opts: { peers?: readonly ServiceName[]; faulty?: readonly UsageSourceName[] } = {}): Promise<SubscriberStack> {
  const stack = await startStack(0);
  const mesh = await startMesh({ NATS_URL: stack.nats.url });
  const faulty: SubscriberStack['faulty'] = {};
  try {
    for (const source of opts.faulty ?? []) faulty[source] = await startFaultyFieldUsagePeer(source, mesh.env[`${source.toUpperCase()}_GRPC_ADDR`]);
    const throughFaulty = Object.fromEntries(Object.entries(faulty).map(([source, peer]) => [`${source.toUpperCase()}_GRPC_ADDR`, peer.address]));
    await mesh.start(['subscriber', ...(opts.peers ?? [])], { subscriber: throughFaulty });
  } catch (err) {
    await Promise.all(Object.values(faulty).map((p) => p.close()));
    await mesh.stop();
    await stack.stop();
    throw err;
  }
  const segment = opts.peers?.includes('segment') ? mesh.get('segment') : undefined;
  const gw = await startMeshGateway(stack, mesh, {}, () => Promise.all(Object.values(faulty).map((p) => p.close())));
  return {
    stack,
    mesh,
    subscriber: mesh.get('subscriber'),
    segment,
    gw,
    faulty,
    account: (name) => newAccount(gw, name),
    settled: () => waitForSettled(stack.nc, { outboxes: mesh.outboxes() }),
    async stop() {
      await gw.stop();
      await mesh.stop();
      await Promise.all(Object.values(faulty).map((p) => p.close()));
      await stack.stop();
    },
  };
}

/** A new account (with limits high enough for a test's burst of requests) and its API client. */
export async function newAccount(gw: GatewayHandle, name: string): Promise<Api> {
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
  return api(gw, apiKey, accountId);
}

/** An account's view of the API: one method per HTTP verb, JSON in and out. */
export interface Api {
  apiKey: string;
  accountId: string;
  get(path: string): Promise<ApiResponse>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  put(path: string, body?: unknown): Promise<ApiResponse>;
  patch(path: string, body?: unknown): Promise<ApiResponse>;
  delete(path: string): Promise<ApiResponse>;
}

export function api(gw: GatewayHandle, apiKey: string, accountId: string): Api {
  return {
    apiKey,
    accountId,
    get: (path) => call(gw, 'GET', path, { apiKey }),
    post: (path, body, headers) => call(gw, 'POST', path, { apiKey, body, headers }),
    put: (path, body) => call(gw, 'PUT', path, { apiKey, body }),
    patch: (path, body) => call(gw, 'PATCH', path, { apiKey, body }),
    delete: (path) => call(gw, 'DELETE', path, { apiKey }),
  };
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** A well-formed id that names nothing. */
export const UNKNOWN_ID = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';

/** Asserts a status and returns the JSON body (the whole response is shown on failure). */
export function expectStatus(res: ApiResponse, status: number): any { // eslint-disable-line @typescript-eslint/no-explicit-any
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  return res.json;
}
