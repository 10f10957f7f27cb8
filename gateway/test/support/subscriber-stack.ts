import { Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { commonV1, referencesV1 } from '@mailer/proto';
import { adminRequest, startService, type RunningService } from '@mailer/testing';
import { referenceDouble } from '@mailer/testing/subscriber';
import { call, createAccount, startGateway, startStack, type ApiResponse, type GatewayHandle, type Stack } from './harness';

/**
 * The subscriber domain end to end: a real nats-server, the real subscriber service process and a
 * real gateway process. The services the subscriber service asks for field usages (segment, form,
 * rss, messaging) are in-process FieldUsageService doubles, so a test decides what they report,
 * or that one does not answer. As ReferenceService they say that nothing uses a topic or segment.
 */
export interface SubscriberStack {
  stack: Stack;
  subscriber: RunningService;
  /** The real segment service, when started with `{segment: true}`. */
  segment?: RunningService;
  gw: GatewayHandle;
  usage: UsageSources;
  /** A new account (with limits high enough for a test's burst of requests) and its API client. */
  account(name: string): Promise<Api>;
  stop(): Promise<void>;
}

export const USAGE_SOURCES = ['segment', 'form', 'rss', 'messaging'] as const;
export type UsageSourceName = (typeof USAGE_SOURCES)[number];
type Usage = commonV1.FieldUsage;

/** What each usage source answers, per field id: usages, or no answer at all. */
export interface UsageSources {
  /** The source reports these usages of the field (replacing earlier ones). */
  report(source: UsageSourceName, fieldId: string, usages: Array<Partial<Usage>>): void;
  /** The source fails every call for the field (UNAVAILABLE) until `reset`. */
  fail(source: UsageSourceName, fieldId: string): void;
  reset(): void;
  /** Calls received, per source. */
  calls: Record<UsageSourceName, commonV1.ListFieldUsagesRequest[]>;
  addresses: Record<UsageSourceName, string>;
  close(): Promise<void>;
}

export function usage(partial: Partial<Usage>): Usage {
  return {
    category: commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_FORM,
    area: 'signup step 1',
    artifactId: '9b2f7c1e-6a3d-4e8f-9c0b-1d2e3f4a5b6c',
    artifactName: 'Newsletter signup',
    status: 'ACTIVE',
    reason: 'writes the field',
    link: '',
    permanentDeleteBlocking: false,
    effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE,
    ...partial,
  };
}

export async function startUsageSources(): Promise<UsageSources> {
  const answers = new Map<string, Usage[] | 'fail'>();
  const calls = Object.fromEntries(USAGE_SOURCES.map((s) => [s, []])) as unknown as UsageSources['calls'];
  const servers: Server[] = [];
  const addresses = {} as Record<UsageSourceName, string>;
  for (const source of USAGE_SOURCES) {
    const server = new Server();
    server.addService(commonV1.FieldUsageServiceService, {
      listFieldUsages: (
        callRef: { request: commonV1.ListFieldUsagesRequest },
        callback: (err: Partial<ServiceError> | null, res?: commonV1.ListFieldUsagesResponse) => void,
      ) => {
        calls[source].push(callRef.request);
        const answer = answers.get(`${source}/${callRef.request.fieldId}`);
        if (answer === 'fail') callback({ code: status.UNAVAILABLE, details: `${source} is down` });
        else callback(null, { usages: answer ?? [] });
      },
    } as never);
    server.addService(referencesV1.ReferenceServiceService, referenceDouble(new Map()) as never);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    servers.push(server);
    addresses[source] = `127.0.0.1:${port}`;
  }
  return {
    report: (source, fieldId, usages) => answers.set(`${source}/${fieldId}`, usages.map(usage)),
    fail: (source, fieldId) => answers.set(`${source}/${fieldId}`, 'fail'),
    reset: () => answers.clear(),
    calls,
    addresses,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.tryShutdown(() => resolve()))));
    },
  };
}

/**
 * `segment: true` adds the real segment service (it reads the subscriber service's catalog and
 * projects contacts from NATS); the subscriber service still asks the usage double for field usages.
 */
export async function startSubscriberStack(opts: { segment?: boolean } = {}): Promise<SubscriberStack> {
  const stack = await startStack(0);
  const usageSources = await startUsageSources();
  const subscriber = await startService('subscriber', {
    NATS_URL: stack.nats.url,
    SEGMENT_GRPC_ADDR: usageSources.addresses.segment,
    FORM_GRPC_ADDR: usageSources.addresses.form,
    RSS_GRPC_ADDR: usageSources.addresses.rss,
    MESSAGING_GRPC_ADDR: usageSources.addresses.messaging,
  });
  const segment = opts.segment
    ? await startService('segment', { NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, RSS_GRPC_ADDR: usageSources.addresses.rss, MESSAGING_GRPC_ADDR: usageSources.addresses.messaging })
    : undefined;
  const gw = await startGateway({
    NATS_URL: stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    ...(segment ? { SEGMENT_GRPC_ADDR: segment.address } : {}),
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
  });
  return {
    stack,
    subscriber,
    segment,
    gw,
    usage: usageSources,
    async account(name) {
      const { accountId, apiKey } = await createAccount(gw, name);
      await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
      return api(gw, apiKey, accountId);
    },
    async stop() {
      await gw.stop();
      await segment?.stop();
      await subscriber.stop();
      await usageSources.close();
      await stack.stop();
    },
  };
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
