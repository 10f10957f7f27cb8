// The real services wired to each other as in a deployment, for integration tests: every service's
// addresses are chosen first, so each process starts knowing all its peers, whichever starts first. A
// test starts only the services it needs; a peer it does not start has nothing listening at its
// address (its callers get UNAVAILABLE, as from a service that is down), never a stand-in.
//
// The addresses are held by this process until their service starts (a listener that cuts every
// connection off at once): other test processes picking free ports meanwhile cannot take them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
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
  /**
   * SIGTERM (or kill -9), then the same service again on its addresses, data and settings (+ `env`);
   * `downMs`: how long it stays down first (its addresses held meanwhile, cutting callers off).
   */
  restart(name: ServiceName, opts?: { kill9?: boolean; env?: NodeJS.ProcessEnv; downMs?: number }): Promise<RunningService>;
  /** The outboxes of the running services, for waitForSettled. */
  outboxes(): OutboxCount[];
  /** Stops every running service and deletes their data. */
  stop(): Promise<void>;
}

/** `env` goes to every service (NATS_URL at least); started services are listed in `start`. */
export async function startMesh(env: { NATS_URL: string } & NodeJS.ProcessEnv, start: ServiceName[] = [], envOf: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {}): Promise<ServiceMesh> {
  const held = new Map<ServiceName, HeldPort[]>();
  const hold = async (name: ServiceName, again?: number) => {
    const port = await holdPort(again);
    held.set(name, [...(held.get(name) ?? []), port]);
    return port.port;
  };
  // Each service's ports, held again while a restarted service stays down.
  const ports = new Map<ServiceName, number[]>();
  const wiring: Record<string, string> = {};
  for (const name of SERVICES) wiring[`${name.toUpperCase()}_GRPC_ADDR`] = `127.0.0.1:${await hold(name)}`;
  wiring.FORM_HTTP_ADDR = `127.0.0.1:${await hold('form')}`;
  wiring.MESSAGING_HTTP_ADDR = `127.0.0.1:${await hold('messaging')}`;
  // Settings a restart must keep: the listeners and the secrets that sign what readers hold.
  const own: Partial<Record<ServiceName, NodeJS.ProcessEnv>> = {
    form: { TRACKING_SECRET: crypto.randomBytes(32).toString('base64url') },
    messaging: { BOUNCE_SMTP_PORT: String(await hold('messaging')), TRACKING_SECRET: crypto.randomBytes(32).toString('base64url') },
    webhook: { SECRET_SEALING_KEY: crypto.randomBytes(32).toString('base64') },
  };
  const release = async (name: ServiceName) => {
    await Promise.all((held.get(name) ?? []).map((p) => p.release()));
    held.delete(name);
  };
  const running = new Map<ServiceName, { svc: RunningService; env: NodeJS.ProcessEnv }>();
  const launch = async (name: ServiceName, extra: NodeJS.ProcessEnv = {}) => {
    if (!ports.has(name)) ports.set(name, (held.get(name) ?? []).map((p) => p.port));
    await release(name);
    const full = { ...wiring, ...own[name], ...env, ...extra } as { NATS_URL: string } & NodeJS.ProcessEnv;
    // Generous: several services start at once on a loaded machine (a failure is still loud). A port
    // taken in the instant between its release and the bind is tried again (its peers know it).
    for (let attempt = 1; ; attempt++) {
      try {
        const svc = await startService(name, full, 60_000);
        running.set(name, { svc, env: { ...extra, DATA_DIR: svc.dataDir } });
        return svc;
      } catch (err) {
        if (attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const mesh: ServiceMesh = {
    env: wiring,
    get(name) {
      const r = running.get(name);
      if (!r) throw new Error(`the ${name} service is not running in this mesh`);
      return r.svc;
    },
    async start(names, more = {}) {
      const fresh = [...new Set(names)];
      const already = fresh.filter((name) => running.has(name));
      if (already.length) throw new Error(`already running in this mesh: ${already.join(', ')}`);
      await Promise.all(fresh.map((name) => launch(name, { ...envOf[name], ...more[name] })));
    },
    async restart(name, opts = {}) {
      const svc = mesh.get(name);
      const was = running.get(name)!.env;
      if (opts.kill9) await svc.kill9();
      else await svc.stop();
      if (opts.downMs) {
        for (const port of ports.get(name) ?? []) await hold(name, port);
        await new Promise((r) => setTimeout(r, opts.downMs));
      }
      return launch(name, { ...was, ...opts.env });
    },
    outboxes: () => [...running.values()].map(({ svc }) => outboxOf(svc)),
    async stop() {
      for (const name of [...held.keys()]) await release(name);
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

interface HeldPort {
  port: number;
  release(): Promise<void>;
}

/** A free loopback port (or `again`, one a stopped service had), listened on (every connection cut off at once) until released. */
async function holdPort(again?: number): Promise<HeldPort> {
  for (let attempt = 1; ; attempt++) {
    const port = again ?? (await freePort());
    const server = net.createServer((socket) => socket.destroy());
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      server.unref();
      let released: Promise<void> | undefined;
      return { port, release: () => (released ??= new Promise((resolve) => server.close(() => resolve()))) };
    }
    if (again !== undefined) throw new Error(`could not hold port ${again} again`);
    if (attempt >= 20) throw new Error('could not hold a free port');
  }
}
