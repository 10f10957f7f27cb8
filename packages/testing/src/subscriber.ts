// Integration-test support for anything that needs a subscriber service (its own tests, the segment
// service's, the gateway's): the subscriber service as a real process on a real nats-server, with the
// real peers a test asks for (startSubscriberStack), its gRPC client, request builders, error capture
// and a reader of the DOMAIN stream. A subpath of its own (`@mailer/testing/subscriber`): it loads the
// kit and the protos.
import { randomUUID } from 'node:crypto';
import type { ServiceError } from '@grpc/grpc-js';
import { AckPolicy, connect, DeliverPolicy, type NatsConnection } from 'nats';
import { createClient, fromServiceError } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { startMesh, type ServiceMesh } from './mesh';
import { startNatsServer, type NatsServerHandle } from './nats';
import type { RunningService, ServiceName } from './processes';

// The kit's reference-check client is tested against a ReferenceService whose answers a test sets.
export * from './references';

export const P = subscriberV1;
export const S = subscriberV1.SubscriberStatus;
export const FT = subscriberV1.FieldType;
export const O = subscriberV1.SyncOutcome;
export type Client = ReturnType<typeof createClient<subscriberV1.SubscriberServiceClient>>;

export const newAccount = (): string => randomUUID();

/** A running subscriber stack: nats-server, the subscriber service, its client and a NATS connection. */
export interface SubscriberStack {
  nats: NatsServerHandle;
  svc: RunningService;
  client: Client;
  nc: NatsConnection;
  /** The services around it: the `peers` a test asked for run (e.g. rss and messaging, asked before a topic or segment is deleted); the others answer nothing. */
  mesh: ServiceMesh;
  /** kill -9 and start again on the same address and data directory (new client). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** nats-server + subscriber service (+ extra env) + the real `peers`; stop() ends them all. */
export async function startSubscriberStack(extra: Record<string, string> = {}, peers: ServiceName[] = []): Promise<SubscriberStack> {
  const nats = await startNatsServer();
  let mesh: ServiceMesh;
  try {
    mesh = await startMesh({ NATS_URL: nats.url }, peers);
  } catch (err) {
    await nats.stop();
    throw err;
  }
  try {
    await mesh.start(['subscriber'], { subscriber: { FIELD_USAGE_DEADLINE_MS: '1000', ...extra } });
  } catch (err) {
    await mesh.stop();
    await nats.stop();
    throw err;
  }
  const env: SubscriberStack = {
    nats,
    mesh,
    svc: mesh.get('subscriber'),
    client: undefined as unknown as Client,
    nc: await connect({ servers: nats.url, ...nats.auth }),
    async restart() {
      env.client.close();
      env.svc = await mesh.restart('subscriber', { kill9: true });
      env.client = createClient(subscriberV1.SubscriberServiceClient, env.svc.address, 20_000);
    },
    async stop() {
      env.client?.close();
      await env.nc?.close();
      await env.svc?.stop(); // a test may have put another process here
      await mesh.stop();
      await nats.stop();
    },
  };
  env.client = createClient(subscriberV1.SubscriberServiceClient, env.svc.address, 20_000);
  return env;
}

/** The names the subscriber service's own tests use. */
export type Env = SubscriberStack;
export const startEnv = startSubscriberStack;

export interface CallError {
  code: number | undefined;
  errorId: string | undefined;
  message: string;
  details: Array<{ path: string; problem: string }> | undefined;
}

/** The gRPC status, errorId and details of a call that must fail. */
export async function errorOf(p: Promise<unknown>): Promise<CallError> {
  try {
    await p;
  } catch (err) {
    const e = err as ServiceError;
    const d = fromServiceError(e);
    return { code: e.code, errorId: d?.errorId, message: e.details, details: d?.details };
  }
  throw new Error('expected the call to fail');
}

// ---- request builders ----

export const text = (value: string): subscriberV1.FieldValue => ({ value: { $case: 'text', value }, labels: [] });
export const email = (value: string): subscriberV1.FieldValue => ({ value: { $case: 'email', value }, labels: [] });
export const num = (value: number): subscriberV1.FieldValue => ({ value: { $case: 'number', value }, labels: [] });
export const date = (value: string): subscriberV1.FieldValue => ({ value: { $case: 'date', value }, labels: [] });
export const bool = (value: boolean): subscriberV1.FieldValue => ({ value: { $case: 'booleanValue', value }, labels: [] });
export const opt = (value: string): subscriberV1.FieldValue => ({ value: { $case: 'optionId', value }, labels: [] });
export const opts = (ids: string[]): subscriberV1.FieldValue => ({ value: { $case: 'optionIds', value: { ids } }, labels: [] });

export function addReq(accountId: string, emailAddress: string, extra: Partial<subscriberV1.AddSubscriberRequest> = {}): subscriberV1.AddSubscriberRequest {
  return { accountId, email: emailAddress, subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED, tags: [], topicIds: [], topicIdsGiven: false, fields: [], ...extra };
}

export const add = (c: Client, accountId: string, emailAddress: string, extra: Partial<subscriberV1.AddSubscriberRequest> = {}) =>
  c.addSubscriber(addReq(accountId, emailAddress, extra)).then((r) => r.subscriber!);

export const addField = (c: Client, accountId: string, label: string, fieldType: subscriberV1.FieldType, extra: Partial<subscriberV1.AddFieldRequest> = {}) =>
  c.addField({ accountId, label, fieldType, required: false, internal: false, options: [], ...extra }).then((r) => r.field!);

export const fieldId = (f: subscriberV1.Field): string => (f.ref?.ref?.$case === 'fieldId' ? f.ref.ref.value : '');

export const addTag = (c: Client, accountId: string, name: string) => c.addTag({ accountId, name }).then((r) => r.tag!);
export const addTopic = (c: Client, accountId: string, label: string, extra: Partial<subscriberV1.AddTopicRequest> = {}) =>
  c.addTopic({ accountId, label, enrollExistingSubscribers: false, isDefault: false, ...extra }).then((r) => r.topic!);

export const data = (c: Client, accountId: string, subscriberId: string) => c.getSubscriberData({ accountId, subscriberId }).then((r) => r.data!);

export const list = (c: Client, accountId: string, extra: Partial<subscriberV1.ListSubscribersRequest> = {}) =>
  c.listSubscribers({ accountId, pageNumber: 1, pageSize: 1000, status: S.SUBSCRIBER_STATUS_UNSPECIFIED, ...extra });

// ---- DOMAIN stream ----

export interface DomainEventJson {
  type: string;
  accountId: string;
  occurredAt: string;
  version?: number;
  subscriber?: Record<string, any>;
  [key: string]: any;
}

let consumerNo = 0;

/**
 * The account's events on the DOMAIN stream, in stream order, once `until` holds for them (the
 * relay publishes asynchronously); fails after the timeout with what it saw.
 */
export async function eventsOf(nc: NatsConnection, accountId: string, until: (events: DomainEventJson[]) => boolean, timeoutMs = 15_000): Promise<DomainEventJson[]> {
  const jsm = await nc.jetstreamManager();
  const deadline = Date.now() + timeoutMs;
  let seen: DomainEventJson[] = [];
  while (Date.now() < deadline) {
    const name = `t${process.pid}_${++consumerNo}`;
    await jsm.consumers.add('DOMAIN', { durable_name: name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, filter_subject: 'domain.>' });
    const consumer = await nc.jetstream().consumers.get('DOMAIN', name);
    const all: DomainEventJson[] = [];
    const { num_pending } = await consumer.info();
    let left = num_pending;
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(left, 1000), expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        const e = m.json<DomainEventJson>();
        if (e.subject === undefined) (e as any).subject = m.subject;
        if (e.accountId === accountId) all.push(e);
      }
      if (got === 0) break;
      left -= got;
    }
    await jsm.consumers.delete('DOMAIN', name);
    seen = all;
    if (until(all)) return all;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`DOMAIN events of ${accountId} did not satisfy the condition in ${timeoutMs} ms; saw ${JSON.stringify(seen.map((e) => e.type))}`);
}
