// Internal traffic as the processes run it, for whoever starts them (tests, benches, the local runner):
// every process's NATS declarations (src/nats-access.ts), the NATS users derived from them, and the
// credentials of one run. Test servers and processes get them without asking, so every integration
// test exercises authenticated NATS and gRPC traffic.
import crypto from 'node:crypto';
import path from 'node:path';
import { natsPermissions, natsUsers, type NatsAccess, type NatsPermissions, type NatsUser } from '@mailer/nats';
import { GRPC_CALLS, useServiceIdentity, type ProcessName } from '@mailer/kit';

/** The repository root (packages/testing/dist/.. or src/..). */
const root = path.resolve(__dirname, '..', '..', '..');

const PROCESSES = Object.keys(GRPC_CALLS) as ProcessName[];

/** The NATS declarations of every process, read from its build (`npm run build` first). */
export function processAccess(): NatsAccess[] {
  return PROCESSES.map((name) => {
    const file = path.join(root, name === 'gateway' ? 'gateway' : `services/${name}`, 'dist', 'nats-access.js');
    return (require(file) as { NATS_ACCESS: NatsAccess }).NATS_ACCESS;
  });
}

/**
 * Who may do what inside the system, as the Helm chart needs it (charts/mailer/files/internal-access.json,
 * written by `npm run internal-access`, checked against this by the chart tests): the gRPC calls each
 * process makes (its network policies) and each process's NATS permissions (the NATS users it renders).
 */
export function internalAccess(): { grpcCalls: typeof GRPC_CALLS; natsPermissions: Record<string, NatsPermissions> } {
  const processes = processAccess();
  return { grpcCalls: GRPC_CALLS, natsPermissions: Object.fromEntries(processes.map((p) => [p.name, natsPermissions(p, processes)])) };
}

/** Every permission: the user tests (and an operator's tools) connect as to look at or inject messages. */
export const OPERATOR_USER = 'operator';

/**
 * The nats-server configuration (JSON, which its config format accepts) with one user per process,
 * holding only its own permissions, and the operator user; plus TLS when given.
 */
export function natsServerConfig(passwordOf: (user: string) => string, tls?: NatsServerTls): string {
  const users: NatsUser[] = [...natsUsers(processAccess(), passwordOf), { user: OPERATOR_USER, password: passwordOf(OPERATOR_USER) }];
  return JSON.stringify(
    {
      authorization: { users },
      ...(tls ? { tls: { cert_file: tls.certFile, key_file: tls.keyFile, ...(tls.caFile ? { ca_file: tls.caFile, verify: true } : {}) } } : {}),
    },
    null,
    2,
  );
}

export interface NatsServerTls {
  certFile: string;
  keyFile: string;
  /** Clients must present a certificate signed by this CA. */
  caFile?: string;
}

// One secret per test process: every server and process it starts shares the credentials derived
// from it, so a NATS server restarted in a test accepts the processes still running.
const runSecret = crypto.randomBytes(32);
const derive = (purpose: string) => crypto.createHmac('sha256', runSecret).update(purpose).digest('base64url');

export const harnessCredentials = {
  natsPassword: (user: string) => derive(`nats:${user}`),
  grpcSecret: derive('grpc'),
};

/** The operator's NATS credentials of this run (every server started by startNatsServer knows them). */
export const operatorAuth = { user: OPERATOR_USER, pass: harnessCredentials.natsPassword(OPERATOR_USER) };

/** The environment giving `name` its NATS user and the run's gRPC secret (a test may override any). */
export function processCredentials(name: ProcessName): NodeJS.ProcessEnv {
  return { NATS_USER: name, NATS_PASSWORD: harnessCredentials.natsPassword(name), INTERNAL_GRPC_SECRET: harnessCredentials.grpcSecret };
}

// Test code calls services directly (createClient): it signs its calls as the gateway, which may call
// every service.
useServiceIdentity('gateway', harnessCredentials.grpcSecret);
