import { hostPort } from './config';

/**
 * Default gRPC port of each service: the one table every config reads its defaults from. The chart
 * (charts/mailer/values.yaml) and the local runner (scripts/run-local.js, base port + index in this
 * order) keep their own copies, checked against this table by test/ports.test.ts. The ports lie
 * outside Linux's ephemeral range, so an outgoing connection never holds one when a service starts.
 */
export const SERVICE_PORTS = {
  subscriber: 7051,
  segment: 7052,
  form: 7053,
  rss: 7054,
  messaging: 7055,
  webhook: 7056,
} as const;

export type ServiceName = keyof typeof SERVICE_PORTS;

/** The environment variable holding a service's address, e.g. `SEGMENT_GRPC_ADDR`. */
export type ServiceAddressVar<S extends ServiceName> = `${Uppercase<S>}_GRPC_ADDR`;

export const serviceAddressVar = <S extends ServiceName>(service: S): ServiceAddressVar<S> =>
  `${service.toUpperCase()}_GRPC_ADDR` as ServiceAddressVar<S>;

/** The default address of a service on loopback, e.g. `127.0.0.1:7052`. */
export const defaultServiceAddress = (service: ServiceName): string => `127.0.0.1:${SERVICE_PORTS[service]}`;

type AddressFields<S extends ServiceName> = { [K in S as ServiceAddressVar<K>]: ReturnType<typeof hostPort.default> };

/**
 * Config fields `<SERVICE>_GRPC_ADDR` (host:port, defaulting to the table above) for the given
 * services: a service lists its own name and its peers'.
 */
export function serviceAddressDefaults<S extends ServiceName>(...services: S[]): AddressFields<S> {
  return Object.fromEntries(services.map((s) => [serviceAddressVar(s), hostPort.default(defaultServiceAddress(s))])) as AddressFields<S>;
}

/** Every process: the gateway and the services. */
export type ProcessName = 'gateway' | ServiceName;

/**
 * Which services each process calls over gRPC: the one table that gives a process its peers'
 * addresses (peerAddressDefaults) and tells every server which callers it accepts (grpcCallers),
 * so a process can be allowed exactly the calls it makes. The chart's network policies follow it too
 * (charts/mailer/files/internal-access.json, generated from it).
 */
export const GRPC_CALLS = {
  // Every REST call becomes a call on one service.
  gateway: ['subscriber', 'segment', 'form', 'rss', 'messaging', 'webhook'],
  // Audience pages and segment members; field usages before a field is archived or deleted.
  subscriber: ['segment', 'form', 'rss', 'messaging'],
  // The field catalog of segment conditions; whether a newsletter or an automation names a segment
  // before it is deleted.
  segment: ['subscriber', 'rss', 'messaging'],
  // Catalog and sender checks when a form is saved; signups and confirmation mails.
  form: ['subscriber', 'messaging'],
  // Segments, topics and sender profiles when a newsletter is saved; the audience send.
  rss: ['segment', 'subscriber', 'messaging'],
  // Recipients' statuses, topics and bounce effects; segments of automation steps; forms and
  // newsletters naming a sender profile or template; consent signups of custom events.
  messaging: ['subscriber', 'segment', 'form', 'rss'],
  webhook: [],
} as const satisfies Record<ProcessName, readonly ServiceName[]>;

/** The processes that may call `service` (the inverse of GRPC_CALLS). */
export function grpcCallers(service: ServiceName): ProcessName[] {
  return (Object.keys(GRPC_CALLS) as ProcessName[]).filter((caller) => (GRPC_CALLS[caller] as readonly string[]).includes(service));
}

/** Config fields `<SERVICE>_GRPC_ADDR` of a process: its own listen address (a service) and its peers'. */
export function peerAddressDefaults<P extends ProcessName>(process: P) {
  const own = (process === 'gateway' ? [] : [process]) as Array<Exclude<P, 'gateway'>>;
  return serviceAddressDefaults<Exclude<P, 'gateway'> | (typeof GRPC_CALLS)[P][number]>(...own, ...GRPC_CALLS[process]);
}
