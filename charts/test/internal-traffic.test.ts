// The chart's side of internal traffic (docs/architecture.md "Internal traffic", docs/operations.md): NetworkPolicies on
// by default, ingress and egress, validated against the Kubernetes models and read as Kubernetes
// would (who may reach which port); the admin listener bound where a policy guards it; the
// internal gRPC secret and the NATS users generated and kept like the other secrets; and the
// rendered NATS users given to a real nats-server, which admits a real service with them.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { isIPv4 } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { connect } from 'nats';
import { grpcCallers, GRPC_CALLS, type ProcessName, type ServiceName } from '@mailer/kit';
import { freePort, internalAccess, natsServerBinary, startService } from '@mailer/testing';

const ROOT = path.resolve(__dirname, '../..');
const HELM = path.join(ROOT, 'node_modules/.bin/helm');
const REQUIRED = ['--set', 'mail.publicBaseUrl=https://mail.example.org', '--set', 'mail.bounceDomain=bounces.example.org'];
const PROCESSES = Object.keys(GRPC_CALLS) as ProcessName[];

/* eslint-disable @typescript-eslint/no-explicit-any */
type Obj = Record<string, any>;

function render(args: string[] = []): Obj[] {
  const res = spawnSync(HELM, ['template', 'mailer', 'charts/mailer', '--namespace', 'mailer-test', ...REQUIRED, ...args], { cwd: ROOT, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`helm template failed:\n${res.stderr}`);
  return yaml.loadAll(res.stdout).filter(Boolean) as Obj[];
}
const find = (objs: Obj[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name)!;
const labelsOf = (name: string) => ({ 'app.kubernetes.io/name': 'mailer', 'app.kubernetes.io/instance': 'mailer', 'app.kubernetes.io/component': name });
const containerEnv = (objs: Obj[], name: string): Record<string, Obj> =>
  Object.fromEntries(find(objs, 'Deployment', `mailer-${name}`).spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e]));
const secretValue = (secret: Obj, key: string) => Buffer.from(secret.data[key], 'base64').toString('utf8');

function selects(selector: Obj | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) if (e.operator !== 'In' || !e.values.includes(labels[e.key])) return false;
  return true;
}
const ipToInt = (ip: string) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  if (!isIPv4(base) || !isIPv4(ip)) return false;
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipToInt(ip) / size) === Math.floor(ipToInt(base) / size);
}

/** A destination: a pod of this release (by workload) or an address outside the cluster. */
type Destination = { workload: string } | { ip: string };
/** Would Kubernetes let `from`'s pods open a connection to `to` on `port`? (Its egress policy only.) */
function egressAllows(policy: Obj, to: Destination, port: number, protocol = 'TCP'): boolean {
  return (policy.spec.egress ?? []).some((rule: Obj) => {
    const portOk = !rule.ports || rule.ports.some((p: Obj) => p.port === port && (p.protocol ?? 'TCP') === protocol);
    const peerOk =
      !rule.to ||
      rule.to.some((peer: Obj) =>
        'workload' in to
          ? !peer.ipBlock && !peer.namespaceSelector && selects(peer.podSelector, labelsOf(to.workload))
          : peer.ipBlock && inCidr(to.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c: string) => inCidr(to.ip, c)),
      );
    return portOk && peerOk;
  });
}

test('files/internal-access.json is what the code declares (else run `npm run internal-access`)', () => {
  const file = JSON.parse(fs.readFileSync(path.join(ROOT, 'charts/mailer/files/internal-access.json'), 'utf8'));
  expect(file).toEqual(JSON.parse(JSON.stringify(internalAccess())));
});

describe('NetworkPolicies, on by default', () => {
  const objs = render();
  const policy = (name: string) => find(objs, 'NetworkPolicy', `mailer-${name}`);
  const grpcPort = (name: string) => find(objs, 'Deployment', `mailer-${name}`).spec.template.spec.containers[0].ports.find((p: Obj) => p.name === 'grpc').containerPort;
  const SERVICES = PROCESSES.filter((p) => p !== 'gateway') as ServiceName[];

  test('one per workload, ingress and egress, each valid for the Kubernetes API', () => {
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(PROCESSES.map((p) => `mailer-${p}`).sort());
    for (const p of policies) {
      new NetworkPolicy(p as any).validate();
      expect(p.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    }
  });

  test.each(PROCESSES.map((p) => [p]))('%s reaches DNS and NATS; MongoDB only with a store', (name) => {
    expect(egressAllows(policy(name), { ip: '10.96.0.10' }, 53, 'UDP')).toBe(true);
    expect(egressAllows(policy(name), { ip: '10.1.2.3' }, 4222)).toBe(true);
    expect(egressAllows(policy(name), { ip: '10.1.2.4' }, 27017)).toBe(name !== 'gateway');
  });

  test.each(PROCESSES.map((p) => [p]))('%s reaches the gRPC ports of the services it calls (GRPC_CALLS) and no other', (name) => {
    for (const service of SERVICES) {
      const calls = (GRPC_CALLS[name] as readonly string[]).includes(service);
      expect({ service, allowed: egressAllows(policy(name), { workload: service }, grpcPort(service)) }).toEqual({ service, allowed: calls });
      expect(grpcCallers(service).includes(name)).toBe(calls);
    }
  });

  test('the gateway reaches the reader-facing pages it forwards to', () => {
    expect(egressAllows(policy('gateway'), { workload: 'form' }, 7153)).toBe(true);
    expect(egressAllows(policy('gateway'), { workload: 'messaging' }, 7155)).toBe(true);
    expect(egressAllows(policy('form'), { workload: 'messaging' }, 7155)).toBe(false);
  });

  test('only rss and webhook reach the internet (customer URLs, any port), never private or link-local addresses', () => {
    for (const name of PROCESSES) {
      const fetchesUrls = name === 'rss' || name === 'webhook';
      expect({ name, internet: egressAllows(policy(name), { ip: '93.184.216.34' }, 443) }).toEqual({ name, internet: fetchesUrls });
      expect({ name, port: egressAllows(policy(name), { ip: '93.184.216.34' }, 8443) }).toEqual({ name, port: fetchesUrls });
      for (const ip of ['10.0.0.5', '172.16.3.4', '192.168.1.1', '169.254.169.254', '127.0.0.1']) {
        expect({ name, ip, allowed: egressAllows(policy(name), { ip }, 443) }).toEqual({ name, ip, allowed: false });
      }
    }
  });

  test('only messaging reaches SMTP relays (besides rss and webhook, which reach any public address)', () => {
    for (const name of PROCESSES) {
      expect({ name, smtp: egressAllows(policy(name), { ip: '203.0.113.25' }, 587) }).toEqual({ name, smtp: ['messaging', 'rss', 'webhook'].includes(name) });
    }
  });

  test('the admin listener binds every interface only because the policy guards its port', () => {
    expect(containerEnv(objs, 'gateway').ADMIN_HOST.value).toBe('0.0.0.0');
    const admin = policy('gateway').spec.ingress.find((r: Obj) => r.ports.some((p: Obj) => p.port === 'admin'));
    expect(admin.from).toEqual([{ podSelector: {} }]);
    const off = render(['--set', 'networkPolicy.enabled=false']);
    expect(off.filter((o) => o.kind === 'NetworkPolicy')).toHaveLength(0);
    expect(containerEnv(off, 'gateway').ADMIN_HOST.value).toBe('127.0.0.1');
    expect(containerEnv(render(['--set', 'gateway.adminHost=10.0.0.1']), 'gateway').ADMIN_HOST.value).toBe('10.0.0.1');
  });

  test('destinations and exceptions follow the values: narrowed NATS, an outbound exception, resolvers of mail.dnsServers', () => {
    const narrowed = render([
      '--set-json', 'networkPolicy.egress.nats.to=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"nats"}}}]',
      '--set-json', 'services.webhook.outbound.allowedCidrs=["10.20.0.0/16"]',
      '--set-json', 'mail.dnsServers=["10.0.0.10","10.0.0.11:5353"]',
    ]);
    const np = (name: string) => find(narrowed, 'NetworkPolicy', `mailer-${name}`);
    for (const p of narrowed.filter((o) => o.kind === 'NetworkPolicy')) new NetworkPolicy(p as any).validate();
    expect(egressAllows(np('form'), { ip: '10.1.2.3' }, 4222)).toBe(false);
    expect(egressAllows(np('webhook'), { ip: '10.20.1.1' }, 8080)).toBe(true);
    expect(egressAllows(np('rss'), { ip: '10.20.1.1' }, 8080)).toBe(false);
    expect(egressAllows(np('messaging'), { ip: '10.0.0.11' }, 5353, 'UDP')).toBe(true);
  });
});

describe('internal credentials', () => {
  const objs = render();
  const secret = find(objs, 'Secret', 'mailer');

  test('each workload gets the gRPC secret and its own NATS user and password from the Secret', () => {
    expect(secretValue(secret, 'INTERNAL_GRPC_SECRET').length).toBeGreaterThanOrEqual(32);
    for (const name of PROCESSES) {
      const env = containerEnv(objs, name);
      const key = `NATS_PASSWORD_${name.toUpperCase()}`;
      expect(env.NATS_USER).toEqual({ name: 'NATS_USER', value: `mailer-${name}` });
      expect(env.NATS_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: 'mailer', key });
      expect(env.INTERNAL_GRPC_SECRET.valueFrom.secretKeyRef).toEqual({ name: 'mailer', key: 'INTERNAL_GRPC_SECRET' });
      expect(secretValue(secret, key).length).toBeGreaterThanOrEqual(32);
    }
  });

  test('given values are used as given; TLS mounts the CA (and client certificate) from its Secret', () => {
    const given = render(['--set', 'secrets.internalGrpcSecret=an-internal-grpc-secret-of-32-characters', '--set', 'secrets.natsPasswords.form=a-form-password-given']);
    const s = find(given, 'Secret', 'mailer');
    expect(secretValue(s, 'INTERNAL_GRPC_SECRET')).toBe('an-internal-grpc-secret-of-32-characters');
    expect(secretValue(s, 'NATS_PASSWORD_FORM')).toBe('a-form-password-given');

    const tls = render(['--set', 'nats.tls.enabled=true', '--set', 'nats.tls.secretName=nats-client-tls', '--set', 'nats.tls.clientCertificate=true']);
    const pod = find(tls, 'Deployment', 'mailer-rss').spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'nats-tls', secret: { secretName: 'nats-client-tls', defaultMode: 0o440 } });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'nats-tls', mountPath: '/etc/mailer/nats-tls', readOnly: true });
    const env = containerEnv(tls, 'rss');
    expect([env.NATS_TLS_CA.value, env.NATS_TLS_CERT.value, env.NATS_TLS_KEY.value]).toEqual(['/etc/mailer/nats-tls/ca.crt', '/etc/mailer/nats-tls/tls.crt', '/etc/mailer/nats-tls/tls.key']);
    const missing = spawnSync(HELM, ['template', 'mailer', 'charts/mailer', ...REQUIRED, '--set', 'nats.tls.enabled=true'], { cwd: ROOT, encoding: 'utf8' });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('nats.tls.secretName is required');
  });

  test('a workload the code does not know gets no NATS user that could do anything', () => {
    const values = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-chart-')), 'values.yaml');
    fs.writeFileSync(values, yaml.dump({ services: { billing: { enabled: true, image: { repository: 'mailer-billing' }, replicas: 1, grpcPort: 50099, resources: {}, autoscaling: { enabled: false }, pdb: { enabled: false } } } }));
    const res = spawnSync(HELM, ['template', 'mailer', 'charts/mailer', ...REQUIRED, '-f', values], { cwd: ROOT, encoding: 'utf8' });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('workload billing has no NATS permissions in files/internal-access.json');
  });

  /** nats-server with the rendered users.conf included, and `env` in its environment. */
  async function natsServerWith(usersConf: string, env: Record<string, string> = {}): Promise<{ url: string; stop: () => void }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-chart-nats-'));
    fs.writeFileSync(path.join(dir, 'users.conf'), usersConf);
    fs.writeFileSync(path.join(dir, 'nats.conf'), 'authorization {\n  include "users.conf"\n}\n');
    const port = await freePort();
    const server = spawn(natsServerBinary(), ['-c', path.join(dir, 'nats.conf'), '-js', '-sd', path.join(dir, 'store'), '-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const stop = () => {
      server.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    };
    let out = '';
    server.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const deadline = Date.now() + 10_000;
    while (!out.includes('Server is ready')) {
      if (server.exitCode !== null || Date.now() > deadline) {
        stop();
        throw new Error(`nats-server did not start with the rendered users:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return { url: `nats://127.0.0.1:${port}`, stop };
  }

  /** The form service connects as its user with `password`, and may publish its own subjects only. */
  async function formConnectsAlone(url: string, password: string): Promise<void> {
    const form = await startService('form', { NATS_URL: url, NATS_USER: 'mailer-form', NATS_PASSWORD: password });
    await form.stop();
    const nc = await connect({ servers: url, user: 'mailer-form', pass: password, inboxPrefix: '_INBOX.form' });
    try {
      const js = nc.jetstream();
      await js.publish('jobs.form-submission.acc-1', '{}');
      await expect(js.publish('jobs.email.acc-1', '{}', { timeout: 1_000 })).rejects.toThrow();
    } finally {
      await nc.close();
    }
    await expect(connect({ servers: url, user: 'mailer-form', pass: 'wrong', maxReconnectAttempts: 0 })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  }

  const usersConfOf = (rendered: Obj[]) => Buffer.from(find(rendered, 'Secret', 'mailer-nats-users').data['users.conf'], 'base64').toString('utf8');

  describe('the NATS users Secret, given to a real nats-server', () => {
    const usersConf = usersConfOf(objs);
    let server: { url: string; stop: () => void };
    beforeAll(async () => {
      server = await natsServerWith(usersConf);
    });
    afterAll(() => server?.stop());

    test('holds bcrypt hashes only, never a password', () => {
      for (const name of PROCESSES) expect(usersConf).not.toContain(secretValue(secret, `NATS_PASSWORD_${name.toUpperCase()}`));
      expect(usersConf.match(/"\$2a\$10\$/g)).toHaveLength(PROCESSES.length);
    });

    test('a service connects with the password the chart gave it, and may publish only its own subjects', async () => {
      await formConnectsAlone(server.url, secretValue(secret, 'NATS_PASSWORD_FORM'));
    }, 60_000);
  });

  describe('with secrets.existingSecret: the passwords stay in that Secret, the NATS server reads them from its environment', () => {
    const existing = render(['--set', 'secrets.existingSecret=mailer-prod-secrets']);
    const usersConf = usersConfOf(existing);
    // What the operator's Secret holds (NATS_PASSWORD_<WORKLOAD>) and maps to the server's variables.
    const passwordOf = (name: string) => `operator-chosen-password-of-${name}`;
    const serverEnv = Object.fromEntries(PROCESSES.map((name) => [`MAILER_${name.toUpperCase()}_PASSWORD`, passwordOf(name)]));

    test('users.conf names a variable per workload, holds no hash, and the pods read their password from the existing Secret', () => {
      expect(usersConf).not.toMatch(/\$2a\$/);
      for (const name of PROCESSES) {
        expect(usersConf).toContain(`"password": $MAILER_${name.toUpperCase()}_PASSWORD,`);
        expect(containerEnv(existing, name).NATS_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: 'mailer-prod-secrets', key: `NATS_PASSWORD_${name.toUpperCase()}` });
      }
      expect(existing.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual(['mailer-nats-users']);
    });

    test('a service connects with the password from the Secret; a server without the variables refuses to start', async () => {
      const server = await natsServerWith(usersConf, serverEnv);
      try {
        await formConnectsAlone(server.url, passwordOf('form'));
      } finally {
        server.stop();
      }
      await expect(natsServerWith(usersConf)).rejects.toThrow(/MAILER_[A-Z]+_PASSWORD/);
    }, 60_000);
  });
});
