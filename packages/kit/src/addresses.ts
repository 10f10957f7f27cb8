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
