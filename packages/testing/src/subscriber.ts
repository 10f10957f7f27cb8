// Integration-test support for anything that needs a subscriber service (its own tests, the segment
// service's, the gateway's): the subscriber service as a real process on a real nats-server
// (startSubscriberStack), its gRPC client, request builders, error capture and a reader of the DOMAIN
// stream. A subpath of its own (`@mailer/testing/subscriber`): it loads the kit and the protos.
import { randomUUID } from 'node:crypto';
import type { ServiceError } from '@grpc/grpc-js';
import { AckPolicy, connect, DeliverPolicy, type NatsConnection } from 'nats';
import { createClient, fromServiceError } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { startNatsServer, type NatsServerHandle } from './nats';
import { startService, type RunningService } from './processes';
import { startReferenceSource, type ReferenceSourceDouble } from './references';

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
  /**
   * What the subscriber service asks before deleting a topic (as rss and messaging; `extra` may point
   * elsewhere); the segment service of a test can be pointed at it too.
   */
  references: ReferenceSourceDouble;
  /** kill -9 and start again on the same data directory (new port, new client). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** nats-server + subscriber service (+ extra env, e.g. the FieldUsageService addresses); stop() ends both. */
export async function startSubscriberStack(extra: Record<string, string> = {}): Promise<SubscriberStack> {
  const nats = await startNatsServer();
  const references = await startReferenceSource();
  extra = { RSS_GRPC_ADDR: references.address, MESSAGING_GRPC_ADDR: references.address, ...extra };
  const env: SubscriberStack = {
    nats,
    references,
    svc: await startService('subscriber', { NATS_URL: nats.url, FIELD_USAGE_DEADLINE_MS: '1000', ...extra }),
    client: undefined as unknown as Client,
    nc: await connect({ servers: nats.url, ...nats.auth }),
    async restart() {
      await env.svc.kill9();
      env.client.close();
      env.svc = await startService('subscriber', { NATS_URL: nats.url, FIELD_USAGE_DEADLINE_MS: '1000', ...extra, DATA_DIR: env.svc.dataDir });
      env.client = createClient(subscriberV1.SubscriberServiceClient, env.svc.address, 20_000);
    },
    async stop() {
      env.client?.close();
      await env.nc?.close();
      await env.svc?.stop();
      await references.close();
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
