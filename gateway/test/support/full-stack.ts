import { SERVICES, startMesh, type ServiceMesh } from '@mailer/testing';
import { startMeshGateway, startStack, type GatewayHandle, type Stack } from './harness';

/**
 * Every service as a real process, each knowing every other's address (as in a deployment: startMesh),
 * and a gateway in front of all of them, reader pages included. Mail stays queued (sending paused). A
 * service that is not built fails the start with the command to run.
 */
export interface FullStack {
  stack: Stack;
  gw: GatewayHandle;
  mesh: ServiceMesh;
  stop(): Promise<void>;
}

export async function startFullStack(gatewayEnv: NodeJS.ProcessEnv = {}): Promise<FullStack> {
  const stack = await startStack(0);
  const publicBaseUrl = 'https://mail.fuzz.test';
  let mesh: ServiceMesh;
  try {
    mesh = await startMesh({ NATS_URL: stack.nats.url }, [...SERVICES], {
      form: { PUBLIC_BASE_URL: publicBaseUrl },
      messaging: { PUBLIC_BASE_URL: publicBaseUrl, MAIL_SEND_PAUSED: 'true' },
    });
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const gw = await startMeshGateway(stack, mesh, { GATEWAY_UNAUTHENTICATED_PER_MINUTE: '1000000', ...gatewayEnv });
  return {
    stack,
    gw,
    mesh,
    async stop() {
      await gw.stop();
      await mesh.stop();
      await stack.stop();
    },
  };
}
