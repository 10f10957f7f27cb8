import { startMesh, waitForSettled, type RunningService, type ServiceMesh, type ServiceName } from '@mailer/testing';
import { startMeshGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { newAccount, type Api } from './subscriber-stack';

/**
 * The subscriber and segment services wired to each other as in a deployment: the subscriber service
 * asks the real segment service for segment members (ListSegmentMembers) and for its field usages
 * (FieldUsageService), the segment service reads the subscriber service's catalog and projects its
 * DOMAIN events; a real gateway in front. `peers` adds more real services (USAGE_SOURCES: every
 * service asked for field usages and references); one not started answers nothing.
 */
export interface WiredStack {
  stack: Stack;
  mesh: ServiceMesh;
  subscriber: RunningService;
  segment: RunningService;
  gw: GatewayHandle;
  account(name: string): Promise<Api>;
  /** The barrier before counting: JetStream consumers and the services' outboxes idle. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** `serviceEnv` goes to every service (e.g. LOG_LEVEL: 'debug' to see every call's outcome line). */
export async function startWiredStack(serviceEnv: NodeJS.ProcessEnv = {}, peers: readonly ServiceName[] = []): Promise<WiredStack> {
  const stack = await startStack(0);
  let mesh: ServiceMesh;
  try {
    mesh = await startMesh({ ...serviceEnv, NATS_URL: stack.nats.url }, ['subscriber', 'segment', ...peers]);
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const gw = await startMeshGateway(stack, mesh);
  return {
    stack,
    mesh,
    subscriber: mesh.get('subscriber'),
    segment: mesh.get('segment'),
    gw,
    account: (name) => newAccount(gw, name),
    settled: () => waitForSettled(stack.nc, { outboxes: mesh.outboxes() }),
    async stop() {
      await gw.stop();
      await mesh.stop();
      await stack.stop();
    },
  };
}
