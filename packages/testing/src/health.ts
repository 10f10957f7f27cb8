// A process's grpc.health.v1 status as a probe sees it, for tests that watch readiness follow NATS,
// the store or a shutdown.
import { credentials, makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const HealthClient = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');

/** The status of `service` ('' = the whole server): SERVING, NOT_SERVING, ..., or the error's message. */
export function grpcHealth(address: string, service = ''): Promise<string> {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as {
    Check(req: { service: string }, opts: { deadline: number }, cb: (err: Error | null, res?: { status?: string }) => void): void;
    close(): void;
  };
  return new Promise<string>((resolve) =>
    client.Check({ service }, { deadline: Date.now() + 1_000 }, (err, res) => resolve(err ? err.message : String(res?.status))),
  ).finally(() => client.close());
}
