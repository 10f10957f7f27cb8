// The real services wired to each other as in a deployment, for integration tests: every service's
// addresses are chosen first, so each process starts knowing all its peers, whichever starts first. A
// test starts only the services it needs; a peer it does not start has nothing listening at its
// address (its callers get UNAVAILABLE, as from a service that is down), never a stand-in.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { freePort } from './nats';
import { SERVICES, startService, type RunningService, type ServiceName } from './processes';
import { outboxOf, type OutboxCount } from './wait';

export interface ServiceMesh {
  /** `<SVC>_GRPC_ADDR` of all six services, and the public listeners FORM_HTTP_ADDR and MESSAGING_HTTP_ADDR (for a gateway). */
  env: Record<string, string>;
  /** The running process of a started service (throws for one not started). */
  get(name: ServiceName): RunningService;
  /** Starts these services at once (each with the mesh's addresses, `env` and its own settings). */
  start(names: ServiceName[], envOf?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>): Promise<void>;
  /** SIGTERM (or kill -9), then the same service again on its addresses, data and settings (+ `env`). */
  restart(name: ServiceName, opts?: { kill9?: boolean; env?: NodeJS.ProcessEnv }): Promise<RunningService>;
  /** The outboxes of the running services, for waitForSettled. */
  outboxes(): OutboxCount[];
  /** Stops every running service and deletes their data. */
  stop(): Promise<void>;
}

/** `env` goes to every service (NATS_URL at least); started services are listed in `start`. */
export async function startMesh(env: { NATS_URL: string } & NodeJS.ProcessEnv, start: ServiceName[] = [], envOf: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {}): Promise<ServiceMesh> {
  const addr = async () => `127.0.0.1:${await freePort()}`;
  const wiring: Record<string, string> = {};
  for (const name of SERVICES) wiring[`${name.toUpperCase()}_GRPC_ADDR`] = await addr();
  wiring.FORM_HTTP_ADDR = await addr();
  wiring.MESSAGING_HTTP_ADDR = await addr();
  // Settings a restart must keep: the listeners and the secrets that sign what readers hold.
  const own: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {
    form: { TRACKING_SECRET: crypto.randomBytes(32).toString('base64url') },
    messaging: { BOUNCE_SMTP_PORT: String(await freePort()), TRACKING_SECRET: crypto.randomBytes(32).toString('base64url') },
    webhook: { SECRET_SEALING_KEY: crypto.randomBytes(32).toString('base64') },
  };
  const running = new Map<ServiceName, { svc: RunningService; env: NodeJS.ProcessEnv }>();
  const launch = async (name: ServiceName, extra: NodeJS.ProcessEnv = {}) => {
    // Generous: several services start at once on a loaded machine (a failure is still loud).
    const svc = await startService(name, { ...wiring, ...own[name], ...env, ...extra } as { NATS_URL: string } & NodeJS.ProcessEnv, 60_000);
    running.set(name, { svc, env: { ...extra, DATA_DIR: svc.dataDir } });
    return svc;
  };
  const mesh: ServiceMesh = {
    env: wiring,
    get(name) {
      const r = running.get(name);
      if (!r) throw new Error(`the ${name} service is not running in this mesh`);
      return r.svc;
    },
    async start(names, more = {}) {
      await Promise.all(names.map((name) => launch(name, { ...envOf[name], ...more[name] })));
    },
    async restart(name, opts = {}) {
      const svc = mesh.get(name);
      const was = running.get(name)!.env;
      if (opts.kill9) await svc.kill9();
      else await svc.stop();
      return launch(name, { ...was, ...opts.env });
    },
    outboxes: () => [...running.values()].map(({ svc }) => outboxOf(svc)),
    async stop() {
      for (const { svc } of [...running.values()].reverse()) await svc.stop();
      for (const { svc } of running.values()) fs.rmSync(svc.dataDir, { recursive: true, force: true });
      running.clear();
    },
  };
  try {
    await mesh.start(start);
  } catch (err) {
    await mesh.stop();
    throw err;
  }
  return mesh;
}
