import { startMesh, waitForSettled, type RunningService, type ServiceMesh, type ServiceName } from '@mailer/testing';
import { startMeshGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { newAccount, type Api } from './subscriber-stack';

/**
 * The signup forms domain end to end: a real nats-server, the real subscriber, form, rss and messaging
 * service processes (each knowing the others' addresses: the form service checks fields, topics,
 * sender profiles and templates; the subscriber service asks it for field usages; messaging asks it
 * which forms name a profile or template, and rss which newsletters send from a profile) and a real
 * gateway. `peers` adds more: the segment service (the subscriber service's last field usage source: a
 * test that archives or deletes a field needs it), the webhook service (the gateway's `reseal-secrets`
 * asks it); one not started answers nothing.
 */
export interface FormStack {
  stack: Stack;
  mesh: ServiceMesh;
  subscriber: RunningService;
  form: RunningService;
  messaging: RunningService;
  gw: GatewayHandle;
  /** The form service's public HTTP listener (host:port). */
  formHttpAddr: string;
  /** The form service's gRPC address (host:port), for calls the messaging service makes. */
  formGrpcAddr: string;
  publicBaseUrl: string;
  account(name: string): Promise<Api>;
  /** kill -9 of the form service, then a new process on the same data, ports and settings (`form` is the new one). */
  restartFormAfterKill9(): Promise<void>;
  /** The barrier before counting: JetStream consumers and the services' outboxes idle. */
  settled(): Promise<void>;
  /** SIGTERM of the messaging service, then a new process on the same data and ports with `env` changed. */
  restartMessaging(env: NodeJS.ProcessEnv): Promise<void>;
  stop(): Promise<void>;
}

export async function startFormStack(
  opts: { publicBaseUrl?: string; formEnv?: NodeJS.ProcessEnv; gatewayEnv?: NodeJS.ProcessEnv; messagingEnv?: NodeJS.ProcessEnv; peers?: readonly ServiceName[] } = {},
): Promise<FormStack> {
  const stack = await startStack(0);
  const publicBaseUrl = opts.publicBaseUrl ?? 'https://mail.forms.test';
  let mesh: ServiceMesh;
  try {
    mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'form', 'rss', 'messaging', ...(opts.peers ?? [])], {
      form: { PUBLIC_BASE_URL: publicBaseUrl, ...opts.formEnv },
      // e.g. a capture relay as SMTP_URL with MAIL_SEND_PAUSED 'false', to read the mail sent
      messaging: { PUBLIC_BASE_URL: publicBaseUrl, MAIL_SEND_PAUSED: 'true', ...opts.messagingEnv },
    });
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const gw = await startMeshGateway(stack, mesh, opts.gatewayEnv);
  return {
    stack,
    mesh,
    get subscriber() {
      return mesh.get('subscriber');
    },
    get form() {
      return mesh.get('form');
    },
    get messaging() {
      return mesh.get('messaging');
    },
    gw,
    formHttpAddr: mesh.env.FORM_HTTP_ADDR,
    formGrpcAddr: mesh.env.FORM_GRPC_ADDR,
    publicBaseUrl,
    account: (name) => newAccount(gw, name),
    async restartFormAfterKill9() {
      await mesh.restart('form', { kill9: true });
    },
    async restartMessaging(env) {
      await mesh.restart('messaging', { env });
    },
    settled: () => waitForSettled(stack.nc, { outboxes: mesh.outboxes() }),
    async stop() {
      await gw.stop();
      await mesh.stop();
      await stack.stop();
    },
  };
}
