// The Kubernetes side of the repository, checked without a cluster: the chart lints and renders
// (default values, everything enabled, error cases), every rendered object validates against the
// Kubernetes API models, the rendered wiring is consistent (selectors, ports, env, secrets,
// network policies), and every workload folder has chart values and a skaffold artifact built
// from the one Dockerfile. Workloads are discovered from services/ at run time, so a new service without its
// entries fails here.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LONGEST_DEADLINE_MS, SHUTDOWN_EXIT_MS } from '@mailer/kit';
import { grpcCallers, type ServiceName } from '@mailer/kit';
import { loadMessagingConfig } from '../../services/messaging/src/config';
import { loadRssConfig } from '../../services/rss/src/config';
import { loadWebhookConfig } from '../../services/webhook/src/config';
import {
  byKind, CHART, CHART_DIR, find, FULL_VALUES, getPath, helm, type K8sObject, MONITORING_API, NAMESPACE, type Obj, readYaml, RELEASE, render,
  renderFails, REQUIRED, ROOT, selects, validateAll, validateRuleGroups, writeTempValues,
} from './helm';

/* eslint-disable @typescript-eslint/no-explicit-any */
interface Workload {
  name: string;
  /** Folder of the workload, relative to the repository root. */
  dir: string;
  /** Dotted path of the workload's entry in values.yaml. */
  valuesKey: string;
  isGateway: boolean;
}

// ---------------------------------------------------------------------------------------------
// The workloads, from the folders on disk

const serviceDirs = fs
  .readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const WORKLOADS: Workload[] = [
  { name: 'gateway', dir: 'gateway', valuesKey: 'gateway', isGateway: true },
  ...serviceDirs.map((name) => ({ name, dir: `services/${name}`, valuesKey: `services.${name}`, isGateway: false })),
];
const SERVICES = WORKLOADS.filter((w) => !w.isGateway);
const values = readYaml<Obj>(`${CHART_DIR}/values.yaml`);
const workloadName = (w: Workload | string) => `${RELEASE}-${typeof w === 'string' ? w : w.name}`;
const grpcAddrVar = (name: string) => `${name.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`;

function containerOf(d: K8sObject, name: string): Obj {
  const containers: Obj[] = d.spec.template.spec.containers;
  const c = containers.find((x) => x.name === name);
  if (!c) throw new Error(`${d.metadata.name} has no container ${name}`);
  return c;
}

function envOf(container: Obj): Map<string, Obj> {
  return new Map((container.env ?? []).map((e: Obj) => [e.name, e]));
}

/** NATS_PASSWORD_FORM: the Secret key of a workload's NATS password. */
const natsPasswordKey = (name: string) => `NATS_PASSWORD_${name.toUpperCase().replace(/-/g, '_')}`;
const ALL_SECRET_KEYS = ['MONGODB_URI', 'API_KEY_MASTER_KEY', 'ADMIN_TOKEN', 'SMTP_URL', 'TRACKING_SECRET', 'SECRET_SEALING_KEY', 'DKIM_KEYS', 'TRACKING_SECRET_PREVIOUS', 'API_KEY_MASTER_KEY_PREVIOUS', 'SECRET_SEALING_KEY_PREVIOUS', 'INTERNAL_GRPC_SECRET', ...WORKLOADS.map((w) => natsPasswordKey(w.name))];
/** The Secret entries a workload reads (required ones, and optional ones that may be absent). */
function SECRET_KEYS_OF(name: string): { required: string[]; optional: string[] } {
  // Every workload signs its gRPC calls and has a NATS password: its own, never another's.
  const internal = ['INTERNAL_GRPC_SECRET', natsPasswordKey(name)];
  if (name === 'gateway') return { required: ['API_KEY_MASTER_KEY', 'ADMIN_TOKEN', ...internal], optional: ['API_KEY_MASTER_KEY_PREVIOUS'] };
  if (name === 'webhook') return { required: ['MONGODB_URI', 'SECRET_SEALING_KEY', ...internal], optional: ['SECRET_SEALING_KEY_PREVIOUS'] };
  if (name === 'messaging') return { required: ['MONGODB_URI', 'SMTP_URL', 'TRACKING_SECRET', ...internal], optional: ['DKIM_KEYS', 'SECRET_SEALING_KEY', 'SECRET_SEALING_KEY_PREVIOUS', 'TRACKING_SECRET_PREVIOUS'] };
  if (name === 'form') return { required: ['MONGODB_URI', 'TRACKING_SECRET', ...internal], optional: ['TRACKING_SECRET_PREVIOUS'] };
  return { required: ['MONGODB_URI', ...internal], optional: [] };
}

test('the repository has the gateway and at least the six known services', () => {
  expect(fs.existsSync(path.join(ROOT, 'gateway'))).toBe(true);
  expect(serviceDirs).toEqual(expect.arrayContaining(['subscriber', 'segment', 'form', 'rss', 'messaging', 'webhook']));
});

// ---------------------------------------------------------------------------------------------

describe('helm lint --strict', () => {
  test.each([
    ['default values (and the required ones)', REQUIRED],
    ['everything enabled (ci/full-values.yaml)', ['-f', FULL_VALUES]],
    ['development overrides (values-dev.yaml)', ['-f', path.join(CHART, 'values-dev.yaml')]],
  ])('%s', (_label, args) => {
    const res = helm(['lint', '--strict', CHART_DIR, ...(args as string[])]);
    expect(`${res.stdout}${res.stderr}`).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(res.status).toBe(0);
  });
});

describe('default values', () => {
  const objs = render();

  test('every rendered object validates against its Kubernetes model', () => {
    validateAll(objs);
  });

  test('optional objects stay off by default', () => {
    // NetworkPolicy is on by default (charts/test/internal-traffic.test.ts).
    for (const kind of ['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'PrometheusRule']) {
      expect(byKind(objs, kind)).toHaveLength(0);
    }
  });

  test('one Deployment per workload folder and nothing else', () => {
    expect(byKind(objs, 'Deployment').map((d) => d.metadata.name).sort()).toEqual(WORKLOADS.map(workloadName).sort());
  });

  describe.each(WORKLOADS.map((w) => [w.name, w] as const))('%s', (_name, w) => {
    const d = find(objs, 'Deployment', workloadName(w));
    const pod = d.spec.template.spec;
    const c = containerOf(d, w.name);
    const env = envOf(c);
    const wv = getPath(values, w.valuesKey) as Obj;

    test('selector matches its own pods only', () => {
      expect(selects(d.spec.selector, d.spec.template.metadata.labels)).toBe(true);
      for (const other of WORKLOADS.filter((x) => x !== w)) {
        const od = find(objs, 'Deployment', workloadName(other));
        expect(selects(d.spec.selector, od.spec.template.metadata.labels)).toBe(false);
      }
    });

    test('runs its own image', () => {
      expect(c.image).toBe(`mailer-${w.name}:0.1.0`);
    });

    test('non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp', () => {
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBe(10001);
      expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(c.securityContext.runAsNonRoot).toBe(true);
      expect(c.securityContext.runAsUser).toBe(10001);
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(c.securityContext.capabilities.drop).toEqual(['ALL']);
      expect(c.securityContext.capabilities.add).toBeUndefined();
      expect(c.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.hostNetwork).toBeUndefined();
    });

    test('/tmp is the one writable path (emptyDir)', () => {
      expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      const vol = pod.volumes.find((v: Obj) => v.name === 'tmp');
      expect(vol.emptyDir).toBeDefined();
    });

    test('resources are set', () => {
      expect(c.resources.requests.cpu).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      expect(c.resources.limits.memory).toBeDefined();
    });

    test('probes: native gRPC for services, HTTP /healthz and /readyz for the gateway', () => {
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(c[probe]).toBeDefined();
      if (w.isGateway) {
        const httpPort = c.ports.find((p: Obj) => p.name === 'http');
        expect(httpPort.containerPort).toBe(8080);
        expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(c[probe].grpc).toBeUndefined();
      } else {
        const grpcPort = c.ports.find((p: Obj) => p.name === 'grpc');
        expect(grpcPort.containerPort).toBe(wv.grpcPort);
        // Liveness asks for the "liveness" health name, which stays SERVING through a NATS or
        // MongoDB outage (readiness then takes the pod out of rotation instead of a restart storm).
        expect(c.startupProbe.grpc).toEqual({ port: wv.grpcPort });
        expect(c.readinessProbe.grpc).toEqual({ port: wv.grpcPort });
        expect(c.livenessProbe.grpc).toEqual({ port: wv.grpcPort, service: 'liveness' });
        for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
          expect(c[probe].httpGet).toBeUndefined();
          expect(c[probe].tcpSocket).toBeUndefined();
        }
      }
    });

    test('metrics on their own port 9464', () => {
      expect(c.ports.find((p: Obj) => p.name === 'metrics')?.containerPort).toBe(9464);
    });

    test('environment: ConfigMap for settings, Secret for MONGODB_URI (services) and the gateway keys', () => {
      const cm = find(objs, 'ConfigMap', RELEASE);
      expect(c.envFrom).toEqual([{ configMapRef: { name: cm.metadata.name } }]);
      const secret = find(objs, 'Secret', RELEASE);
      // Least privilege: only the services have a store, only the gateway holds the API-key master
      // key and the admin token, only messaging the relay and DKIM keys, only messaging and form
      // (confirmation links) the tracking secret.
      const { required: secretKeys, optional } = SECRET_KEYS_OF(w.name);
      // The variable reading a key: its name, except a workload's NATS password, read as NATS_PASSWORD.
      const refTo = (key: string) => [...env.values()].find((e: Obj) => e.valueFrom?.secretKeyRef?.key === key);
      const variable = (key: string) => (key.startsWith('NATS_PASSWORD_') ? 'NATS_PASSWORD' : key);
      for (const key of secretKeys) {
        expect(refTo(key)).toEqual({ name: variable(key), valueFrom: { secretKeyRef: { name: secret.metadata.name, key } } });
        expect(secret.data[key]).toBeTruthy();
      }
      // Optional entries (absent from the chart's Secret until given) must not keep the pod from starting.
      for (const key of optional) expect(refTo(key)).toEqual({ name: key, valueFrom: { secretKeyRef: { name: secret.metadata.name, key, optional: true } } });
      for (const key of ALL_SECRET_KEYS.filter((k) => !secretKeys.includes(k) && !optional.includes(k))) {
        expect({ key, present: refTo(key) !== undefined || env.has(key) }).toEqual({ key, present: false });
      }
      // No secret travels as a literal value, in the env or the ConfigMap.
      for (const key of ALL_SECRET_KEYS) {
        expect(env.get(key)?.value).toBeUndefined();
        expect(cm.data[key]).toBeUndefined();
      }
      expect(env.get('MONGODB_DATABASE')?.value).toBe(w.isGateway ? undefined : `mailer_${w.name}`);
      expect(env.get('OTEL_SERVICE_NAME')?.value).toBe(w.name);
      if (w.isGateway) {
        expect(env.get('GATEWAY_PORT')?.value).toBe('8080');
        expect(env.get('ADMIN_PORT')?.value).toBe('8081');
        // Every interface, as the admin Service needs, because the NetworkPolicy (on by default)
        // guards the port; without it the gateway binds loopback (charts/test/internal-traffic.test.ts).
        expect(env.get('ADMIN_HOST')?.value).toBe('0.0.0.0');
        expect(env.get('GATEWAY_TRUST_PROXY')?.value).toBe(String(wv.trustProxy));
        expect(env.get('GATEWAY_HSTS_MAX_AGE_SECONDS')?.value).toBe(String(wv.hstsMaxAgeSeconds));
      } else {
        // Its own address is the listen address; the ConfigMap holds what clients dial.
        expect(env.get(grpcAddrVar(w.name))?.value).toBe(`0.0.0.0:${wv.grpcPort}`);
      }
    });

    test('a Service reaches the pods on named container ports', () => {
      const svc = find(objs, 'Service', workloadName(w));
      expect(selects(svc.spec.selector ? { matchLabels: svc.spec.selector } : undefined, d.spec.template.metadata.labels)).toBe(true);
      const names = new Set(c.ports.map((p: Obj) => p.name));
      for (const p of svc.spec.ports) expect(names.has(p.targetPort)).toBe(true);
    });
  });

  test('the gateway admin port is only on a ClusterIP Service; the public Service carries HTTP only', () => {
    const pub = find(objs, 'Service', workloadName('gateway'));
    expect(pub.spec.ports.map((p: Obj) => p.name)).toEqual(['http']);
    const admin = find(objs, 'Service', `${workloadName('gateway')}-admin`);
    expect(admin.spec.type).toBe('ClusterIP');
    expect(admin.spec.ports.find((p: Obj) => p.name === 'admin').port).toBe(8081);
    const lb = render(['--set', 'gateway.service.type=LoadBalancer']);
    expect(find(lb, 'Service', workloadName('gateway')).spec.type).toBe('LoadBalancer');
    expect(find(lb, 'Service', `${workloadName('gateway')}-admin`).spec.type).toBe('ClusterIP');
    for (const s of byKind(lb, 'Service').filter((x) => x.spec.type !== 'ClusterIP')) {
      expect(s.spec.ports.map((p: Obj) => p.name)).toEqual(['http']);
    }
  });

  test('the ConfigMap tells every client where each gRPC service listens', () => {
    const cm = find(objs, 'ConfigMap', RELEASE);
    expect(cm.data.NATS_URL).toBe(values.config.natsUrl);
    expect(cm.data.METRICS_PORT).toBe('9464');
    expect(cm.data.LOG_LEVEL).toBe('info');
    for (const w of SERVICES) {
      const port = (getPath(values, w.valuesKey) as Obj).grpcPort;
      expect(cm.data[grpcAddrVar(w.name)]).toBe(`${workloadName(w)}:${port}`);
      const svc = find(objs, 'Service', workloadName(w));
      expect(svc.spec.ports.find((p: Obj) => p.name === 'grpc').port).toBe(port);
    }
  });

  test('services that fetch customer URLs run the production outbound guard: https only, no address exception', () => {
    for (const name of ['rss', 'webhook']) {
      const env = envOf(containerOf(find(objs, 'Deployment', workloadName(name)), name));
      expect(env.get('OUTBOUND_ALLOW_HTTP')?.value).toBe('false');
      expect(env.get('OUTBOUND_ALLOWED_CIDRS')?.value).toBe('');
      expect(env.has('OUTBOUND_ALLOW_PRIVATE')).toBe(false); // a name no process reads
    }
  });

  test('the webhook service gets its delivery settings, valid for its config schema', () => {
    const env = envOf(containerOf(find(objs, 'Deployment', workloadName('webhook')), 'webhook'));
    const settings = Object.fromEntries(['WEBHOOK_SUBSCRIPTION_IN_FLIGHT', 'WEBHOOK_DELIVERY_CONCURRENCY', 'WEBHOOK_RETRY_SCHEDULE_SECONDS', 'WEBHOOK_ATTEMPT_CLAIM_SECONDS', 'WEBHOOK_SCAN_INTERVAL_MS'].map((k) => [k, env.get(k)?.value]));
    expect(settings).toEqual({
      WEBHOOK_SUBSCRIPTION_IN_FLIGHT: '8',
      WEBHOOK_DELIVERY_CONCURRENCY: '256',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '5,300,1800,7200,18000,36000,36000,50400,72000,86400',
      WEBHOOK_ATTEMPT_CLAIM_SECONDS: '30',
      WEBHOOK_SCAN_INTERVAL_MS: '1000',
    });
    // The sealing key comes from the Secret (generated).
    const sealingKey = Buffer.from(find(objs, 'Secret', RELEASE).data.SECRET_SEALING_KEY, 'base64').toString('utf8');
    expect(env.get('SECRET_SEALING_KEY')?.valueFrom?.secretKeyRef?.key).toBe('SECRET_SEALING_KEY');
    expect(() => loadWebhookConfig({ ...settings, SECRET_SEALING_KEY: sealingKey, WEBHOOK_GRPC_ADDR: '0.0.0.0:7056' })).not.toThrow();
    expect(envOf(containerOf(find(objs, 'Deployment', workloadName('rss')), 'rss')).has('WEBHOOK_DELIVERY_CONCURRENCY')).toBe(false);
  });

  test('the rss service gets its polling period, valid for its config schema, and the guard settings it validates', () => {
    const env = envOf(containerOf(find(objs, 'Deployment', workloadName('rss')), 'rss'));
    expect(env.get('RSS_POLL_INTERVAL_SECONDS')?.value).toBe('600');
    const config = loadRssConfig(Object.fromEntries([...env].filter(([, v]) => typeof v.value === 'string').map(([k, v]) => [k, v.value])));
    expect(config.RSS_POLL_INTERVAL_SECONDS).toBe(600);
    expect(env.get('RSS_POLL_CONCURRENCY')?.value).toBe('4');
    expect(config.RSS_POLL_CONCURRENCY).toBe(4);
    expect(config.RSS_SEND_PAGE_SIZE).toBe(500);
    expect(config.RSS_SEND_LEASE_SECONDS).toBe(60);
    expect(env.get('RSS_SEND_LEASE_SECONDS')?.value).toBe('60');
    expect([env.get('RSS_SEND_RETRY_SECONDS')?.value, config.RSS_SEND_RETRY_SECONDS]).toEqual(['60', 60]);
    expect([env.get('RSS_SEND_MAX_ATTEMPTS')?.value, config.RSS_SEND_MAX_ATTEMPTS]).toEqual(['5', 5]);
    expect(renderFails(['--set', 'services.rss.feeds.sendMaxAttempts=0'])).toContain('sendMaxAttempts');
    expect(renderFails(['--set', 'services.rss.feeds.sendPageSize=5000'])).toContain('sendPageSize');
    expect(config.OUTBOUND_ALLOW_HTTP).toBe(false);
    expect(envOf(containerOf(find(objs, 'Deployment', workloadName('webhook')), 'webhook')).has('RSS_POLL_INTERVAL_SECONDS')).toBe(false);
    expect(renderFails(['--set', 'services.rss.feeds.pollIntervalSeconds=0'])).toContain('pollIntervalSeconds');
  });

  test('the messaging service gets its broadcast send settings, valid for its config schema', () => {
    const env = envOf(containerOf(find(objs, 'Deployment', workloadName('messaging')), 'messaging'));
    const names = ['BROADCAST_SEND_PAGE_SIZE', 'BROADCAST_SEND_LEASE_SECONDS', 'BROADCAST_SEND_RETRY_SECONDS', 'BROADCAST_SEND_MAX_ATTEMPTS'];
    expect(names.map((n) => env.get(n)?.value)).toEqual(['500', '60', '60', '5']);
    // The Secret's values are references here: the process would read them from the Secret.
    const secrets = { TRACKING_SECRET: 'x'.repeat(40), SECRET_SEALING_KEY: Buffer.alloc(32, 1).toString('base64') };
    const config = loadMessagingConfig({ ...Object.fromEntries([...env].filter(([, v]) => typeof v.value === 'string').map(([k, v]) => [k, v.value])), ...secrets });
    expect(names.map((n) => config[n as keyof typeof config])).toEqual([500, 60, 60, 5]);
    expect(envOf(containerOf(find(objs, 'Deployment', workloadName('rss')), 'rss')).has('BROADCAST_SEND_PAGE_SIZE')).toBe(false);
    expect(renderFails(['--set', 'services.messaging.broadcasts.sendMaxAttempts=0'])).toContain('sendMaxAttempts');
    expect(renderFails(['--set', 'services.messaging.broadcasts.sendPageSize=5000'])).toContain('sendPageSize');
  });

  test('an operator exception to the outbound guard reaches its service as the settings (docs/configuration.md) spells it', () => {
    const custom = render(['--set', 'services.webhook.outbound.allowHttp=true', '--set', 'services.webhook.outbound.allowedCidrs={10.20.0.0/16,fd12::/64}']);
    const env = envOf(containerOf(find(custom, 'Deployment', workloadName('webhook')), 'webhook'));
    expect(env.get('OUTBOUND_ALLOW_HTTP')?.value).toBe('true');
    expect(env.get('OUTBOUND_ALLOWED_CIDRS')?.value).toBe('10.20.0.0/16,fd12::/64');
    const rss = envOf(containerOf(find(custom, 'Deployment', workloadName('rss')), 'rss'));
    expect(rss.get('OUTBOUND_ALLOW_HTTP')?.value).toBe('false');
    expect(renderFails(['--set', 'services.webhook.outbound.allowedCidrs={localhost}'])).toContain('allowedCidrs');
  });

  test('the generated Secret holds a 32-byte master key, a 32-byte sealing key and an admin token; no former keys', () => {
    const secret = find(objs, 'Secret', RELEASE);
    for (const name of ['API_KEY_MASTER_KEY', 'SECRET_SEALING_KEY']) {
      const value = Buffer.from(secret.data[name], 'base64').toString('utf8');
      expect({ name, bytes: Buffer.from(value, 'base64').length }).toEqual({ name, bytes: 32 });
    }
    expect(secret.data.API_KEY_MASTER_KEY_PREVIOUS).toBeUndefined();
    expect(secret.data.SECRET_SEALING_KEY_PREVIOUS).toBeUndefined();
    expect(Buffer.from(secret.data.ADMIN_TOKEN, 'base64').toString('utf8').length).toBeGreaterThanOrEqual(32);
    expect(Buffer.from(secret.data.MONGODB_URI, 'base64').toString('utf8')).toBe(values.secrets.mongodbUri);
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
  });
});

describe('everything enabled (ci/full-values.yaml, monitoring API present)', () => {
  const objs = render(['-f', FULL_VALUES, ...MONITORING_API]);
  const full = readYaml<Obj>(`${CHART_DIR}/ci/full-values.yaml`);
  const podLabels = (name: string) => find(objs, 'Deployment', workloadName(name)).spec.template.metadata.labels;

  test('every rendered object validates', () => {
    validateAll(objs);
    // NetworkPolicy is on by default (charts/test/internal-traffic.test.ts).
    for (const kind of ['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ServiceMonitor', 'PrometheusRule']) {
      expect(byKind(objs, kind).length).toBeGreaterThan(0);
    }
  });

  test('ci/full-values.yaml enables HPA and PDB for every workload', () => {
    for (const w of WORKLOADS) {
      expect(getPath(full, `${w.valuesKey}.autoscaling.enabled`)).toBe(true);
      expect(getPath(full, `${w.valuesKey}.pdb.enabled`)).toBe(true);
    }
  });

  test.each(WORKLOADS.map((w) => [w.name]))('%s: HPA owns the replicas, PDB covers its pods', (name) => {
    const hpa = find(objs, 'HorizontalPodAutoscaler', workloadName(name));
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: workloadName(name) });
    expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
    expect(find(objs, 'Deployment', workloadName(name)).spec.replicas).toBeUndefined();
    const pdb = find(objs, 'PodDisruptionBudget', workloadName(name));
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(selects(pdb.spec.selector, podLabels(name))).toBe(true);
    for (const other of WORKLOADS.filter((x) => x.name !== name)) expect(selects(pdb.spec.selector, podLabels(other.name))).toBe(false);
  });

  test('the ServiceMonitor scrapes exactly the Services with a metrics port, honouring the service label', () => {
    const sm = find(objs, 'ServiceMonitor', RELEASE);
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
    expect(sm.metadata.labels?.release).toBe('kube-prometheus-stack');
    const ep = sm.spec.endpoints[0];
    expect(ep).toMatchObject({ port: 'metrics', path: '/metrics', honorLabels: true });
    const selected = byKind(objs, 'Service').filter((s) => selects(sm.spec.selector, s.metadata.labels));
    const withMetrics = byKind(objs, 'Service').filter((s) => s.spec.ports.some((p: Obj) => p.name === 'metrics'));
    expect(selected.map((s) => s.metadata.name).sort()).toEqual(withMetrics.map((s) => s.metadata.name).sort());
    // Every workload's pods are behind one of them.
    for (const w of WORKLOADS) {
      expect(selected.some((s) => selects({ matchLabels: s.spec.selector }, podLabels(w.name)))).toBe(true);
    }
  });

  test('the PrometheusRule carries the alert files unchanged', () => {
    const rule = find(objs, 'PrometheusRule', RELEASE);
    const files = fs.readdirSync(path.join(CHART, 'alerts')).filter((f) => f.endsWith('.yaml')).sort();
    const groups = files.flatMap((f) => readYaml<Obj>(`${CHART_DIR}/alerts/${f}`).groups);
    expect(rule.spec.groups).toEqual(groups);
  });

  test('the dashboards ConfigMap carries the dashboard files unchanged', () => {
    const cm = find(objs, 'ConfigMap', `${RELEASE}-dashboards`);
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    const files = fs.readdirSync(path.join(CHART, 'dashboards')).filter((f) => f.endsWith('.json')).sort();
    expect(Object.keys(cm.data).sort()).toEqual(files);
    for (const f of files) expect(JSON.parse(cm.data[f])).toEqual(JSON.parse(fs.readFileSync(path.join(CHART, 'dashboards', f), 'utf8')));
  });

  describe('NetworkPolicies', () => {
    const policies = byKind(objs, 'NetworkPolicy');
    const stranger = { app: 'intruder' };
    const otherRelease = (name: string) => ({ ...podLabels(name), 'app.kubernetes.io/instance': 'someone-else' });

    /** The ingress rules of the policies selecting these pods that admit traffic to a named port. */
    function rulesFor(labels: Record<string, string>, port: string): Obj[] {
      const selecting = policies.filter((p) => selects(p.spec.podSelector, labels));
      expect(selecting.length).toBeGreaterThan(0);
      for (const p of selecting) expect(p.spec.policyTypes).toContain('Ingress');
      return selecting
        .flatMap((p) => p.spec.ingress ?? [])
        .filter((r: Obj) => !r.ports || r.ports.some((x: Obj) => x.port === port));
    }
    /** Can a pod with these labels, in the policy's namespace, reach the port? */
    function admitsPod(rules: Obj[], from: Record<string, string>): boolean {
      return rules.some((r) => !r.from || r.from.length === 0 || r.from.some((peer: Obj) => !peer.namespaceSelector && !peer.ipBlock && selects(peer.podSelector, from)));
    }
    const admitsAnyone = (rules: Obj[]) => rules.some((r) => !r.from || r.from.length === 0);

    test('one policy per workload, selecting exactly its pods', () => {
      expect(policies.map((p) => p.metadata.name).sort()).toEqual(WORKLOADS.map(workloadName).sort());
      for (const w of WORKLOADS) {
        const p = find(objs, 'NetworkPolicy', workloadName(w));
        for (const other of WORKLOADS) expect(selects(p.spec.podSelector, podLabels(other.name))).toBe(other === w);
      }
    });

    test.each(SERVICES.map((w) => [w.name]))('%s accepts gRPC only from the workloads that call it (GRPC_CALLS)', (name) => {
      const rules = rulesFor(podLabels(name), 'grpc');
      expect(rules.length).toBeGreaterThan(0);
      expect(admitsAnyone(rules)).toBe(false);
      for (const r of rules) for (const peer of r.from) expect(peer.namespaceSelector ?? peer.ipBlock).toBeUndefined();
      const callers = grpcCallers(name as ServiceName);
      expect(callers).toContain('gateway');
      for (const w of WORKLOADS) expect({ caller: w.name, admitted: admitsPod(rules, podLabels(w.name)) }).toEqual({ caller: w.name, admitted: callers.includes(w.name as ServiceName) });
      expect(admitsPod(rules, stranger)).toBe(false);
      expect(admitsPod(rules, otherRelease('gateway'))).toBe(false);
    });

    test('the gateway admin port admits pods of the namespace only', () => {
      const rules = rulesFor(podLabels('gateway'), 'admin');
      expect(rules.length).toBeGreaterThan(0);
      expect(admitsAnyone(rules)).toBe(false);
      for (const r of rules) {
        for (const peer of r.from) {
          expect(peer.namespaceSelector).toBeUndefined();
          expect(peer.ipBlock).toBeUndefined();
        }
      }
      expect(admitsPod(rules, stranger)).toBe(true);
    });

    test('the gateway HTTP port is open; metrics only to the configured scrapers', () => {
      expect(admitsAnyone(rulesFor(podLabels('gateway'), 'http'))).toBe(true);
      for (const w of WORKLOADS) {
        const rules = rulesFor(podLabels(w.name), 'metrics');
        expect(admitsAnyone(rules)).toBe(false);
        expect(rules.flatMap((r) => r.from)).toEqual(full.networkPolicy.metricsFrom);
      }
    });

    test('policies name ports the pods actually declare', () => {
      for (const p of policies) {
        const d = byKind(objs, 'Deployment').find((x) => selects(p.spec.podSelector, x.spec.template.metadata.labels))!;
        const names = new Set(d.spec.template.spec.containers.flatMap((c: Obj) => c.ports.map((x: Obj) => x.name)));
        for (const r of p.spec.ingress) for (const port of r.ports ?? []) expect(names.has(port.port)).toBe(true);
      }
    });
  });
});

describe('guards', () => {
  test('the ServiceMonitor and PrometheusRule need the monitoring.coreos.com/v1 API', () => {
    const objs = render(['-f', FULL_VALUES]);
    expect(byKind(objs, 'ServiceMonitor')).toHaveLength(0);
    expect(byKind(objs, 'PrometheusRule')).toHaveLength(0);
    expect(byKind(objs, 'NetworkPolicy').length).toBeGreaterThan(0);
  });

  test('rolling updates: every process keeps serving SHUTDOWN_DELAY_MS after SIGTERM, and the grace period outlasts the delay and the drain', () => {
    // What the processes take after the delay at most (the drain covers the longest request deadline).
    const exitSeconds = Math.ceil(SHUTDOWN_EXIT_MS / 1000);
    expect(SHUTDOWN_EXIT_MS).toBeGreaterThan(LONGEST_DEADLINE_MS);
    const objs = render();
    expect(find(objs, 'ConfigMap', RELEASE).data.SHUTDOWN_DELAY_MS).toBe('5000');
    for (const d of byKind(objs, 'Deployment')) expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(5 + exitSeconds);
    const longer = render(['--set', 'shutdownDelaySeconds=20', '--set', `terminationGracePeriodSeconds=${20 + exitSeconds + 1}`]);
    expect(find(longer, 'ConfigMap', RELEASE).data.SHUTDOWN_DELAY_MS).toBe('20000');
    expect(renderFails(['--set', 'shutdownDelaySeconds=20', '--set', `terminationGracePeriodSeconds=${20 + exitSeconds}`])).toMatch(
      new RegExp(`terminationGracePeriodSeconds \\(${20 + exitSeconds}\\) must exceed shutdownDelaySeconds \\+ ${exitSeconds} \\(${20 + exitSeconds}\\)`),
    );
    expect(renderFails(['--set', 'shutdownDelaySeconds=61', '--set', 'terminationGracePeriodSeconds=90'])).toMatch(/shutdownDelaySeconds/);
  });

  test('...and their values flags', () => {
    const objs = render(MONITORING_API);
    expect(byKind(objs, 'ServiceMonitor')).toHaveLength(0);
    expect(byKind(objs, 'PrometheusRule')).toHaveLength(0);
  });

  test('existingSecret: no Secret with a credential is rendered (the NATS users name variables) and every reference points at it', () => {
    const objs = render(['--set', 'secrets.existingSecret=mailer-prod-secrets']);
    expect(byKind(objs, 'Secret').map((s) => s.metadata.name)).toEqual([`${RELEASE}-nats-users`]);
    const refs = byKind(objs, 'Deployment').flatMap((d) =>
      d.spec.template.spec.containers.flatMap((c: Obj) => (c.env ?? []).filter((e: Obj) => e.valueFrom?.secretKeyRef)),
    );
    const expected = WORKLOADS.reduce((n, w) => n + SECRET_KEYS_OF(w.name).required.length + SECRET_KEYS_OF(w.name).optional.length, 0);
    expect(refs.length).toBe(expected);
    for (const r of refs) expect(r.valueFrom.secretKeyRef.name).toBe('mailer-prod-secrets');
  });

  test('provided keys are used as given', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const token = 'an-admin-token-of-at-least-32-characters';
    const objs = render(['--set', `secrets.apiKeyMasterKey=${key}`, '--set', `secrets.adminToken=${token}`]);
    const secret = find(objs, 'Secret', RELEASE);
    expect(Buffer.from(secret.data.API_KEY_MASTER_KEY, 'base64').toString('utf8')).toBe(key);
    expect(Buffer.from(secret.data.ADMIN_TOKEN, 'base64').toString('utf8')).toBe(token);
  });

  test('gateway.mongodb gives the gateway its own database', () => {
    const objs = render(['--set', 'gateway.mongodb=true']);
    const env = envOf(containerOf(find(objs, 'Deployment', workloadName('gateway')), 'gateway'));
    expect(env.get('MONGODB_URI')?.valueFrom?.secretKeyRef).toEqual({ name: RELEASE, key: 'MONGODB_URI' });
    expect(env.get('MONGODB_DATABASE')?.value).toBe('mailer_gateway');
  });

  test('secretEnv adds Secret-sourced variables to one workload', () => {
    const objs = render(['--set', 'services.messaging.secretEnv.SMTP_URL.name=smtp', '--set', 'services.messaging.secretEnv.SMTP_URL.key=url']);
    validateAll(objs);
    const env = envOf(containerOf(find(objs, 'Deployment', workloadName('messaging')), 'messaging'));
    expect(env.get('SMTP_URL')).toEqual({ name: 'SMTP_URL', valueFrom: { secretKeyRef: { name: 'smtp', key: 'url' } } });
    expect(envOf(containerOf(find(objs, 'Deployment', workloadName('form')), 'form')).has('SMTP_URL')).toBe(false);
  });

  test('without existingSecret a MongoDB URI is required', () => {
    expect(renderFails(['--set', 'secrets.mongodbUri='])).toContain('secrets.mongodbUri is required');
  });

  test('a service added only in values gets the full wiring (the template ranges over the map)', () => {
    const file = writeTempValues({
      services: {
        billing: {
          enabled: true,
          image: { repository: 'mailer-billing' },
          replicas: 1,
          grpcPort: 50099,
          resources: { requests: { cpu: '10m', memory: '64Mi' } },
          autoscaling: { enabled: true, maxReplicas: 3 },
          pdb: { enabled: true },
        },
        webhook: { enabled: false },
      },
      networkPolicy: { enabled: true },
      // A workload the code does not know has no NATS permissions to give (see internal-traffic.test.ts).
      nats: { auth: { enabled: false } },
    });
    const objs = render(['-f', file]);
    validateAll(objs);
    const d = find(objs, 'Deployment', workloadName('billing'));
    expect(containerOf(d, 'billing').readinessProbe.grpc).toEqual({ port: 50099 });
    expect(find(objs, 'Service', workloadName('billing')).spec.ports[0].port).toBe(50099);
    expect(find(objs, 'ConfigMap', RELEASE).data.BILLING_GRPC_ADDR).toBe(`${workloadName('billing')}:50099`);
    find(objs, 'HorizontalPodAutoscaler', workloadName('billing'));
    find(objs, 'PodDisruptionBudget', workloadName('billing'));
    // Unknown to GRPC_CALLS: called by the gateway only, and calling nobody.
    const np = find(objs, 'NetworkPolicy', workloadName('billing'));
    const grpcPeers = np.spec.ingress.find((r: Obj) => r.ports.some((p: Obj) => p.port === 'grpc')).from;
    const gateway = find(objs, 'Deployment', workloadName('gateway'));
    expect(grpcPeers.some((peer: Obj) => selects(peer.podSelector, gateway.spec.template.metadata.labels))).toBe(true);
    expect(grpcPeers.some((peer: Obj) => selects(peer.podSelector, find(objs, 'Deployment', workloadName('form')).spec.template.metadata.labels))).toBe(false);
    // A disabled service disappears everywhere.
    expect(objs.filter((o) => o.metadata.name === workloadName('webhook'))).toHaveLength(0);
    expect(find(objs, 'ConfigMap', RELEASE).data.WEBHOOK_GRPC_ADDR).toBeUndefined();
  });
});

describe('email: reader-facing HTTP, bounce listener, mail settings and secrets', () => {
  const messagingConfig = require(path.join(ROOT, 'services/messaging/dist/config.js')).configSchema;
  const gatewayConfig = require(path.join(ROOT, 'gateway/dist/config.js')).configSchema;
  const webhookConfig = require(path.join(ROOT, 'services/webhook/dist/config.js')).configSchema;
  const container = (objs: K8sObject[], name: string) => containerOf(find(objs, 'Deployment', workloadName(name)), name);

  /** What the process sees: the ConfigMap, then its literal env, then the Secret entries it references. */
  function processEnv(objs: K8sObject[], name: string): Record<string, string> {
    const out: Record<string, string> = { ...find(objs, 'ConfigMap', RELEASE).data };
    const secret = find(objs, 'Secret', RELEASE);
    for (const e of container(objs, name).env) {
      if (e.value !== undefined) out[e.name] = e.value;
      const ref = e.valueFrom?.secretKeyRef;
      if (ref && secret.data[ref.key] !== undefined) out[e.name] = Buffer.from(secret.data[ref.key], 'base64').toString('utf8');
    }
    return out;
  }

  describe('default values', () => {
    const objs = render();

    test('messaging and form listen for reader pages on port http, which their ClusterIP Service carries and the gateway dials', () => {
      const cm = find(objs, 'ConfigMap', RELEASE);
      for (const [name, variable, port] of [['messaging', 'MESSAGING_HTTP_ADDR', 7155], ['form', 'FORM_HTTP_ADDR', 7153]] as const) {
        expect((getPath(values, `services.${name}`) as Obj).httpPort).toBe(port);
        expect(container(objs, name).ports).toContainEqual({ name: 'http', containerPort: port, protocol: 'TCP' });
        expect(envOf(container(objs, name)).get(variable)?.value).toBe(`0.0.0.0:${port}`);
        const svc = find(objs, 'Service', workloadName(name));
        expect(svc.spec.type).toBe('ClusterIP');
        expect(svc.spec.ports).toContainEqual({ name: 'http', port, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' });
        // the gateway has no literal override: it dials the Service from the ConfigMap
        expect(cm.data[variable]).toBe(`${workloadName(name)}:${port}`);
        expect(envOf(container(objs, 'gateway')).has(variable)).toBe(false);
      }
      // services without reader pages have no such port
      for (const name of ['subscriber', 'segment', 'rss', 'webhook']) expect(container(objs, name).ports.map((p: Obj) => p.name)).toEqual(['grpc', 'metrics']);
    });

    test('the bounce listener: container port smtp on all interfaces, on the ClusterIP Service; no public Service unless asked', () => {
      const c = container(objs, 'messaging');
      expect(c.ports).toContainEqual({ name: 'smtp', containerPort: 2525, protocol: 'TCP' });
      expect(envOf(c).get('BOUNCE_SMTP_HOST')?.value).toBe('0.0.0.0');
      expect(envOf(c).get('BOUNCE_SMTP_PORT')?.value).toBe('2525');
      expect(find(objs, 'Service', workloadName('messaging')).spec.ports).toContainEqual({ name: 'smtp', port: 2525, targetPort: 'smtp', protocol: 'TCP' });
      expect(objs.filter((o) => o.metadata.name === `${workloadName('messaging')}-bounces`)).toEqual([]);
    });

    test('the messaging service accepts what the chart gives it: mail settings, relay, generated tracking secret', () => {
      const env = processEnv(objs, 'messaging');
      const parsed = messagingConfig.safeParse(env);
      expect(parsed.error?.issues).toBeUndefined();
      expect(parsed.data).toMatchObject({
        PUBLIC_BASE_URL: 'https://mail.example.org',
        BOUNCE_DOMAIN: 'bounces.example.org',
        SMTP_URL: values.secrets.smtpUrl,
        MAIL_DELIVERY_CONFIRMATION: 'accept',
        MAIL_ALLOWED_FROM_DOMAINS: [],
        SMTP_POOL_SIZE: values.mail.smtpPoolSize,
        MAIL_SEND_CONCURRENCY: values.mail.sendConcurrency,
        MAIL_ACCOUNT_RATE_PER_SECOND: values.mail.accountRatePerSecond,
        DKIM_KEYS: {},
        TRACKING_SECRET_PREVIOUS: [],
        MESSAGING_HTTP_ADDR: '0.0.0.0:7155',
        BOUNCE_SMTP_PORT: 2525,
        // Sending domains must be verified, with a generated sealing key for their DKIM keys; the pod's resolvers.
        MAIL_DOMAIN_VERIFICATION: 'required',
        DNS_SERVERS: [],
        // retention.*
        MESSAGE_RETENTION_DAYS: values.retention.messageDays,
        EVENT_RETENTION_DAYS: values.retention.eventDays,
        REPORT_RETENTION_DAYS: values.retention.reportDays,
        RUN_RETENTION_DAYS: values.retention.runDays,
      });
      expect(parsed.data?.SECRET_SEALING_KEY).toHaveLength(32);
      expect(env.DNS_SERVERS).toBeUndefined();
      expect(processEnv(objs, 'form').SECRET_SEALING_KEY).toBeUndefined();
      expect(env.TRACKING_SECRET.length).toBeGreaterThanOrEqual(32);
      const secret = find(objs, 'Secret', RELEASE);
      expect(secret.data.DKIM_KEYS).toBeUndefined();
      expect(secret.data.TRACKING_SECRET_PREVIOUS).toBeUndefined();
      // the form service signs confirmation links with the same secret
      expect(processEnv(objs, 'form')).toMatchObject({ TRACKING_SECRET: env.TRACKING_SECRET, PUBLIC_BASE_URL: 'https://mail.example.org', FORM_HTTP_ADDR: '0.0.0.0:7153' });
    });

    test('an install without the public address or the bounce domain fails and says which value is missing', () => {
      expect(renderFails([], [])).toContain('mail.publicBaseUrl is required');
      expect(renderFails(['--set', 'mail.publicBaseUrl=https://mail.example.org'], [])).toContain('mail.bounceDomain is required');
      expect(renderFails(['--set', 'secrets.smtpUrl='])).toContain('secrets.smtpUrl is required');
      // no service that writes links: nothing to require
      const res = helm(['template', RELEASE, CHART_DIR, '--set', 'services.messaging.enabled=false', '--set', 'services.form.enabled=false']);
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
    });

    test('the relay URL and the DKIM keys may come from Secrets of their own', () => {
      const own = render(['--set', 'secrets.smtpUrl=', '--set', 'secrets.smtpSecret.name=relay-credentials', '--set', 'secrets.dkimSecret.name=dkim', '--set', 'secrets.dkimSecret.key=keys.json', '--set', 'secrets.dkimKeys.example\\.org.selector=s1', '--set', 'secrets.dkimKeys.example\\.org.privateKey=-----BEGIN PRIVATE KEY-----']);
      validateAll(own);
      const env = envOf(container(own, 'messaging'));
      expect(env.get('SMTP_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'relay-credentials', key: 'SMTP_URL' } });
      // a Secret of its own is named on purpose: its key must exist (not optional)
      expect(env.get('DKIM_KEYS')?.valueFrom).toEqual({ secretKeyRef: { name: 'dkim', key: 'keys.json' } });
      const secret = find(own, 'Secret', RELEASE);
      expect(secret.data.SMTP_URL).toBeUndefined();
      expect(secret.data.DKIM_KEYS).toBeUndefined();
    });

    test('the bounce listener as a NodePort Service on a chosen port', () => {
      const p = 'services.messaging.bounceSmtp.service';
      const np = render(['--set', `${p}.enabled=true`, '--set', `${p}.type=NodePort`, '--set', `${p}.nodePort=30025`, '--set', `${p}.loadBalancerSourceRanges={10.0.0.0/8}`]);
      validateAll(np);
      const svc = find(np, 'Service', `${workloadName('messaging')}-bounces`);
      expect(svc.spec.type).toBe('NodePort');
      expect(svc.spec.ports).toEqual([{ name: 'smtp', port: 25, targetPort: 'smtp', protocol: 'TCP', nodePort: 30025 }]);
      expect(svc.spec.loadBalancerSourceRanges).toBeUndefined();
    });
  });

  describe('everything given (ci/full-values.yaml)', () => {
    const objs = render(['-f', FULL_VALUES]);
    const full = readYaml<Obj>(`${CHART_DIR}/ci/full-values.yaml`);
    const podLabels = (name: string) => find(objs, 'Deployment', workloadName(name)).spec.template.metadata.labels;

    test('relay, DKIM keys and former tracking secrets reach the messaging service through the Secret, as it parses them', () => {
      const env = processEnv(objs, 'messaging');
      const parsed = messagingConfig.safeParse(env);
      expect(parsed.error?.issues).toBeUndefined();
      expect(parsed.data).toMatchObject({
        SMTP_URL: full.secrets.smtpUrl,
        TRACKING_SECRET: full.secrets.trackingSecret,
        TRACKING_SECRET_PREVIOUS: full.secrets.trackingSecretPrevious,
        DKIM_KEYS: full.secrets.dkimKeys,
        MAIL_DELIVERY_CONFIRMATION: 'dsn',
        MAIL_ALLOWED_FROM_DOMAINS: ['example.org', 'example.com'],
        BOUNCE_DOMAIN: full.mail.bounceDomain,
        DNS_SERVERS: ['10.0.0.10', '10.0.0.11:5353'],
      });
      expect(parsed.data?.SECRET_SEALING_KEY?.toString('base64')).toBe(full.secrets.secretSealingKey);
      // never as a literal value, never in the ConfigMap
      const cm = find(objs, 'ConfigMap', RELEASE);
      for (const text of [JSON.stringify(cm), JSON.stringify(byKind(objs, 'Deployment'))]) {
        expect(text).not.toContain('relay-password');
        expect(text).not.toContain(full.secrets.trackingSecret);
        expect(text).not.toContain(full.secrets.secretSealingKey);
        expect(text).not.toContain('BEGIN PRIVATE KEY');
      }
    });

    test('the keyrings: the gateway and the webhook service read their keys and former keys from the Secret, as they parse them', () => {
      const gateway = gatewayConfig.safeParse({ ...processEnv(objs, 'gateway'), ADMIN_TOKEN: full.secrets.adminToken });
      expect(gateway.error?.issues).toBeUndefined();
      const bytes = (keys: string[]) => keys.map((k) => Buffer.from(k, 'base64'));
      expect(gateway.data).toMatchObject({ API_KEY_MASTER_KEY: bytes([full.secrets.apiKeyMasterKey])[0], API_KEY_MASTER_KEY_PREVIOUS: bytes(full.secrets.apiKeyMasterKeyPrevious), GATEWAY_HSTS_MAX_AGE_SECONDS: 63072000 });
      const webhook = webhookConfig.safeParse(processEnv(objs, 'webhook'));
      expect(webhook.error?.issues).toBeUndefined();
      expect(webhook.data).toMatchObject({ SECRET_SEALING_KEY: bytes([full.secrets.secretSealingKey])[0], SECRET_SEALING_KEY_PREVIOUS: bytes(full.secrets.secretSealingKeyPrevious) });
      for (const text of [JSON.stringify(find(objs, 'ConfigMap', RELEASE)), JSON.stringify(byKind(objs, 'Deployment'))]) {
        for (const k of [full.secrets.secretSealingKey, ...full.secrets.apiKeyMasterKeyPrevious, ...full.secrets.secretSealingKeyPrevious]) expect(text).not.toContain(k);
      }
    });

    test('a LoadBalancer Service takes bounces from the internet on port 25 to the messaging pods only', () => {
      const svc = find(objs, 'Service', `${workloadName('messaging')}-bounces`);
      expect(svc.spec).toMatchObject({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', loadBalancerSourceRanges: ['192.0.2.0/24'] });
      expect(svc.spec.ports).toEqual([{ name: 'smtp', port: 25, targetPort: 'smtp', protocol: 'TCP' }]);
      for (const w of WORKLOADS) expect(selects({ matchLabels: svc.spec.selector }, podLabels(w.name))).toBe(w.name === 'messaging');
    });

    describe('NetworkPolicies', () => {
      const policyOf = (name: string) => find(objs, 'NetworkPolicy', workloadName(name));
      const rulesFor = (name: string, port: string) => policyOf(name).spec.ingress.filter((r: Obj) => r.ports.some((x: Obj) => x.port === port));
      const admits = (rules: Obj[], labels: Record<string, string>) => rules.some((r) => !r.from || r.from.some((peer: Obj) => !peer.namespaceSelector && !peer.ipBlock && selects(peer.podSelector, labels)));

      test.each([['messaging'], ['form']])('%s reader pages: from the gateway of this release only', (name) => {
        const rules = rulesFor(name, 'http');
        expect(rules).toHaveLength(1);
        expect(admits(rules, podLabels('gateway'))).toBe(true);
        for (const other of WORKLOADS.filter((w) => w.name !== 'gateway')) expect(admits(rules, podLabels(other.name))).toBe(false);
        expect(admits(rules, { ...podLabels('gateway'), 'app.kubernetes.io/instance': 'someone-else' })).toBe(false);
        expect(admits(rules, { app: 'intruder' })).toBe(false);
      });

      test('the bounce port admits the configured peers (anyone when none are)', () => {
        expect(rulesFor('messaging', 'smtp').map((r: Obj) => r.from)).toEqual([full.services.messaging.bounceSmtp.from]);
        const open = render(['--set', 'networkPolicy.enabled=true']);
        const rules = find(open, 'NetworkPolicy', workloadName('messaging')).spec.ingress.filter((r: Obj) => r.ports.some((x: Obj) => x.port === 'smtp'));
        expect(rules).toEqual([{ ports: [{ port: 'smtp', protocol: 'TCP' }] }]);
      });
    });
  });
});

describe('values.schema.json', () => {
  const schema = JSON.parse(fs.readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'));

  test('is draft-07', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
  });

  test('a well-typed override renders (so the failures below are the schema speaking)', () => {
    const objs = render(['--set', 'services.subscriber.replicas=3']);
    expect(find(objs, 'Deployment', workloadName('subscriber')).spec.replicas).toBe(3);
  });

  test.each([
    ['a non-integer replica count', ['--set', 'services.subscriber.replicas=abc'], 'replicas'],
    ['an unknown top-level key', ['--set', 'replicaCount=2'], 'replicaCount'],
    ['an unknown workload key', ['--set', 'gateway.adminServiceType=LoadBalancer'], 'adminServiceType'],
    ['a master key that is not 32 bytes of base64', ['--set', 'secrets.apiKeyMasterKey=c2hvcnQ='], 'apiKeyMasterKey'],
    ['a former master key that is not 32 bytes of base64', ['--set', 'secrets.apiKeyMasterKeyPrevious={c2hvcnQ=}'], 'apiKeyMasterKeyPrevious'],
    ['a sealing key that is not 32 bytes of base64', ['--set', 'secrets.secretSealingKey=c2hvcnQ='], 'secretSealingKey'],
    ['former sealing keys given as one string', ['--set', 'secrets.secretSealingKeyPrevious=YGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn8='], 'secretSealingKeyPrevious'],
    ['a negative HSTS max-age', ['--set', 'gateway.hstsMaxAgeSeconds=-1'], 'hstsMaxAgeSeconds'],
    ['an out-of-range port', ['--set', 'services.form.grpcPort=70000'], 'grpcPort'],
    ['a log level the processes reject', ['--set', 'config.logLevel=verbose'], 'logLevel'],
    ['an admin token shorter than the gateway accepts', ['--set', 'secrets.adminToken=too-short-for-the-gateway'], 'adminToken'],
    ['a trust-proxy hop count the gateway rejects', ['--set', 'gateway.trustProxy=11'], 'trustProxy'],
    ['a delivery confirmation the messaging service rejects', ['--set', 'mail.deliveryConfirmation=bounce'], 'deliveryConfirmation'],
    ['a public address that is not an http(s) URL', ['--set', 'mail.publicBaseUrl=mail.example.org'], 'publicBaseUrl'],
    ['a relay URL that is not smtp(s)://', ['--set', 'secrets.smtpUrl=http://relay:25'], 'smtpUrl'],
    ['a tracking secret shorter than the messaging service accepts', ['--set', 'secrets.trackingSecret=short'], 'trackingSecret'],
    ['a domain verification the messaging service rejects', ['--set', 'mail.domainVerification=sometimes'], 'domainVerification'],
    ['a sealing key that is not 32 bytes of base64', ['--set', 'secrets.secretSealingKey=c2hvcnQ='], 'secretSealingKey'],
    ['a DNS server list given as one string', ['--set', 'mail.dnsServers=10.0.0.10'], 'dnsServers'],
    ['a DKIM key without its selector', ['--set', 'secrets.dkimKeys.example\\.org.privateKey=-----BEGIN PRIVATE KEY-----'], 'selector'],
    ['a node port outside the node-port range', ['--set', 'services.messaging.bounceSmtp.service.nodePort=25'], 'nodePort'],
    ['a service named gateway', ['-f', FULL_VALUES, '--set-json', 'services.gateway={"enabled":true,"image":{"repository":"x"},"replicas":1,"grpcPort":50000,"resources":{},"autoscaling":{"enabled":false},"pdb":{"enabled":false}}'], 'services'],
  ])('rejects %s', (_label, args, mention) => {
    const stderr = renderFails(args as string[]);
    expect(stderr).toMatch(/schema/);
    expect(stderr).toContain(mention as string);
  });

  test('documents every knob of values.yaml', () => {
    const resolve = (s: Obj): Obj => (s.$ref ? resolve(getPath(schema, s.$ref.replace(/^#\//, '').replace(/\//g, '.')) as Obj) : s);
    const undocumented: string[] = [];
    // Entries of free-form maps (labels, env, quantities) are user data, described by the map.
    const walk = (value: unknown, s: Obj | undefined, at: string, mapEntry: boolean) => {
      if (!s) {
        undocumented.push(`${at} (not in the schema)`);
        return;
      }
      const node = resolve(s);
      if (!mapEntry && !node.description && !s.description) undocumented.push(at);
      if (value && typeof value === 'object' && !Array.isArray(value) && (node.properties || typeof node.additionalProperties === 'object')) {
        for (const [k, v] of Object.entries(value)) {
          const declared = node.properties?.[k];
          const child = declared ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
          walk(v, child, `${at}.${k}`, !declared);
        }
      }
    };
    for (const [k, v] of Object.entries(values)) walk(v, schema.properties[k], k, false);
    expect(undocumented).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('every workload folder is wired: chart values, skaffold artifact of the one Dockerfile', () => {
  const skaffold = readYaml<Obj>('skaffold.yaml');
  const artifacts: Obj[] = skaffold.build?.artifacts ?? [];
  const releases: Obj[] = skaffold.deploy?.helm?.releases ?? [];

  test('chart values have exactly the folders under services/ (plus the gateway)', () => {
    expect(Object.keys(values.services).sort()).toEqual(serviceDirs);
    expect(values.gateway).toBeDefined();
    const ports = SERVICES.map((w) => (getPath(values, w.valuesKey) as Obj).grpcPort);
    expect(new Set(ports).size).toBe(ports.length);
  });

  test('skaffold builds exactly one artifact per workload folder', () => {
    expect(skaffold.apiVersion).toMatch(/^skaffold\/v4/);
    expect(artifacts.map((a) => a.image).sort()).toEqual(WORKLOADS.map((w) => `mailer-${w.name}`).sort());
  });

  test('skaffold deploys charts/mailer with helm', () => {
    expect(releases).toHaveLength(1);
    expect(releases[0].chartPath).toBe(CHART_DIR);
    for (const f of releases[0].valuesFiles ?? []) expect(fs.existsSync(path.join(ROOT, f))).toBe(true);
  });

  describe.each(WORKLOADS.map((w) => [w.name, w] as const))('%s', (_name, w) => {
    const image = `mailer-${w.name}`;
    const sanitized = image.replace(/[-/.:]/g, '_');

    test('has a chart values entry whose image is its skaffold artifact', () => {
      const wv = getPath(values, w.valuesKey) as Obj;
      expect(wv).toBeDefined();
      expect(wv.enabled).toBe(true);
      expect(wv.image.repository).toBe(image);
    });

    test('has a skaffold artifact built from the repository root with the Dockerfile, WORKSPACE its folder', () => {
      const a = artifacts.find((x) => x.image === image);
      expect(a).toBeDefined();
      expect(a!.context).toBe('.');
      expect(a!.docker?.dockerfile).toBe('Dockerfile');
      expect(a!.docker?.buildArgs).toEqual({ WORKSPACE: w.dir });
    });

    test('skaffold wires the built image into the chart values', () => {
      const t = releases[0].setValueTemplates ?? {};
      expect(t[`${w.valuesKey}.image.repository`]).toBe(`{{.IMAGE_REPO_${sanitized}}}`);
      expect(t[`${w.valuesKey}.image.tag`]).toBe(`{{.IMAGE_TAG_${sanitized}}}@{{.IMAGE_DIGEST_${sanitized}}}`);
    });

    test('has no Dockerfile of its own', () => {
      expect(fs.existsSync(path.join(ROOT, w.dir, 'Dockerfile'))).toBe(false);
    });
  });
});

describe('the Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  /** The Dockerfile as the build of one workload sees it. */
  const read = (w: Workload) => dockerfile.split('${WORKSPACE}').join(w.dir);

  test('takes the workload folder as the build argument WORKSPACE, without a default, and runs its dist/main.js', () => {
    expect(dockerfile).toMatch(/^ARG WORKSPACE$/m);
    expect(dockerfile).not.toMatch(/^ARG WORKSPACE=/m);
    expect(dockerfile).toMatch(/test -n "\$\{WORKSPACE\}"/);
    const last = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(last).toMatch(/^ARG WORKSPACE$/m);
    expect(last).toMatch(/^WORKDIR \/app\/\$\{WORKSPACE\}$/m);
    expect(last.trimEnd().split('\n').pop()).toBe('CMD ["node", "--enable-source-maps", "dist/main.js"]');
    for (const w of WORKLOADS) expect({ w: w.dir, main: fs.existsSync(path.join(ROOT, w.dir, 'src/main.ts')) }).toEqual({ w: w.dir, main: true });
  });

  test('is the only one', () => {
    const found = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*Dockerfile*'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    expect(found).toEqual(['Dockerfile']);
  });

  test('multi-stage Node 24 build: npm ci, tsc -b, production prune, non-root uid 10001', () => {
    const text = dockerfile;
    expect(text).toMatch(/^ARG NODE_IMAGE=(node:24-bookworm-slim|gcr\.io\/distroless\/nodejs24\S*)$/m);
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^COPY package\.json package-lock\.json tsconfig\.base\.json \.\/$/m);
    expect(text).toMatch(/npm ci\b/);
    expect(text).toMatch(/npx tsc -b \$\{WORKSPACE\}/);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(text).toMatch(/^USER 10001(:10001)?$/m);
    // The last stage runs as that user and installs nothing.
    const last = text.slice(text.lastIndexOf('\nFROM '));
    expect(last).toMatch(/^USER 10001/m);
    expect(last).not.toMatch(/npm (ci|install)/);
  });

  test('copy every workspace each image depends on (package.json deps and tsconfig references)', () => {
    // Map workspace package names to folders.
    const folders = ['proto', ...fs.readdirSync(path.join(ROOT, 'packages')).map((p) => `packages/${p}`), ...WORKLOADS.map((w) => w.dir)];
    const byName = new Map<string, string>();
    for (const f of folders) {
      const pj = path.join(ROOT, f, 'package.json');
      if (fs.existsSync(pj)) byName.set(JSON.parse(fs.readFileSync(pj, 'utf8')).name, f);
    }
    const depsOf = (folder: string): string[] => {
      const pj = JSON.parse(fs.readFileSync(path.join(ROOT, folder, 'package.json'), 'utf8'));
      const fromPkg = Object.keys(pj.dependencies ?? {}).filter((d) => byName.has(d)).map((d) => byName.get(d)!);
      const tsconfig = path.join(ROOT, folder, 'tsconfig.json');
      const fromTs = fs.existsSync(tsconfig)
        ? ((JSON.parse(fs.readFileSync(tsconfig, 'utf8')).references ?? []) as Obj[]).map((r) => path.relative(ROOT, path.resolve(ROOT, folder, r.path)))
        : [];
      return [...fromPkg, ...fromTs];
    };
    for (const w of WORKLOADS) {
      const text = read(w).split('${WORKSPACE}').join(w.dir);
      const needed = new Set<string>();
      const queue = [w.dir];
      while (queue.length) {
        const f = queue.pop()!;
        if (needed.has(f)) continue;
        needed.add(f);
        queue.push(...depsOf(f));
      }
      for (const f of needed) {
        expect(text).toContain(`COPY ${f}/package.json ${f}/\n`);
        expect(text).toContain(`COPY ${f}/ ${f}/\n`);
      }
    }
  });

  test('.dockerignore keeps installed and built output out of the context', () => {
    const lines = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const pattern of ['**/node_modules', '**/dist', '**/*.tsbuildinfo', '.git']) expect(lines).toContain(pattern);
    // Nothing an image compiles may be ignored.
    for (const kept of ['package.json', 'package-lock.json', 'tsconfig.base.json', 'proto', 'packages', 'services', 'gateway']) {
      expect(lines).not.toContain(kept);
    }
  });
});

describe('dashboards and alert rules', () => {
  const dashboardFiles = fs.readdirSync(path.join(CHART, 'dashboards')).filter((f) => f.endsWith('.json'));
  const alertFiles = fs.readdirSync(path.join(CHART, 'alerts')).filter((f) => f.endsWith('.yaml'));
  const rules: Obj[] = alertFiles.flatMap((f) => readYaml<Obj>(`${CHART_DIR}/alerts/${f}`).groups.flatMap((g: Obj) => g.rules));
  const ruleFor = (pred: (expr: string) => boolean) => rules.filter((r) => pred(r.expr));

  test('a Grafana dashboard shows RED per route and per RPC, rate limits, consumer lag and store latency', () => {
    expect(dashboardFiles.length).toBeGreaterThan(0);
    const exprs: string[] = [];
    for (const f of dashboardFiles) {
      const d = JSON.parse(fs.readFileSync(path.join(CHART, 'dashboards', f), 'utf8'));
      expect(d.uid).toMatch(/^[a-zA-Z0-9-]{1,40}$/);
      expect(d.title).toBeTruthy();
      const ids = d.panels.map((p: Obj) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const p of d.panels.filter((x: Obj) => x.type !== 'row')) {
        expect(p.targets.length).toBeGreaterThan(0);
        for (const t of p.targets) {
          expect(t.expr).toBeTruthy();
          exprs.push(t.expr);
        }
      }
    }
    const all = exprs.join('\n');
    expect(all).toMatch(/sum by \(route\) \(rate\(http_requests_total/);
    expect(all).toMatch(/http_requests_total\{[^}]*status=~"5\.\."/);
    expect(all).toMatch(/histogram_quantile\(0\.99, sum by \(route, le\) \(rate\(http_request_duration_seconds_bucket/);
    expect(all).toMatch(/sum by \(service, method\) \(rate\(grpc_server_handled_total/);
    expect(all).toMatch(/grpc_server_handled_total\{[^}]*code[!=]~?"/);
    expect(all).toMatch(/histogram_quantile\(0\.99, sum by \(service, method, le\) \(rate\(grpc_server_handling_seconds_bucket/);
    expect(all).toContain('rate_limit_rejections_total');
    expect(all).toContain('jetstream_consumer_lag');
    expect(all).toContain('outbox_pending_events');
    expect(all).toContain('mailer_build_info');
    expect(all).toMatch(/store_operation_duration_seconds_bucket/);
  });

  test('alert rules are well-formed', () => {
    expect(alertFiles.length).toBeGreaterThan(0);
    for (const f of alertFiles) validateRuleGroups(readYaml<Obj>(`${CHART_DIR}/alerts/${f}`).groups);
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
  });

  test('alert on a high 5xx ratio, a high p99, growing consumer lag, a growing outbox and restarting pods', () => {
    expect(ruleFor((e) => /http_requests_total\{status=~"5\.\."\}/.test(e) && /\/\s*sum by/.test(e)).length).toBeGreaterThan(0);
    expect(ruleFor((e) => /histogram_quantile\(0\.99,[\s\S]*http_request_duration_seconds_bucket/.test(e)).length).toBeGreaterThan(0);
    expect(ruleFor((e) => /histogram_quantile\(0\.99,[\s\S]*grpc_server_handling_seconds_bucket/.test(e)).length).toBeGreaterThan(0);
    expect(ruleFor((e) => /deriv\(jetstream_consumer_lag\[/.test(e)).length).toBeGreaterThan(0);
    expect(ruleFor((e) => /deriv\(outbox_pending_events\[/.test(e)).length).toBeGreaterThan(0);
    expect(ruleFor((e) => e.includes('kube_pod_container_status_restarts_total')).length).toBeGreaterThan(0);
  });

  test('mail health alerts: bounce rate over 5 %, complaint rate over 0.1 %, deliveries deferred or failing for 15 minutes, a webhook subscription disabled, an RSS issue or a broadcast FAILED', () => {
    const ratio = (outcome: string, threshold: string) =>
      ruleFor((e) => new RegExp(`outcome="${outcome}"[\\s\\S]*/[\\s\\S]*outcome="sent"[\\s\\S]*\\) > ${threshold.replace('.', '\\.')}\\n`).test(e));
    expect(ratio('bounced', '0.05')).toHaveLength(1);
    expect(ratio('complained', '0.001')).toHaveLength(1);
    const failing = ruleFor((e) => /messaging_email_outcomes_total\{outcome=~"deferred\|failed"\}/.test(e));
    expect(failing).toEqual([expect.objectContaining({ for: '15m' })]);
    expect(ruleFor((e) => /increase\(webhook_subscriptions_disabled_total\[/.test(e) && /> 0$/.test(e.trim()))).toHaveLength(1);
    expect(ruleFor((e) => /increase\(mailer_rss_issues_failed_total\[/.test(e) && /> 0$/.test(e.trim()))).toHaveLength(1);
    expect(ruleFor((e) => /increase\(mailer_broadcasts_failed_total\[/.test(e) && /> 0$/.test(e.trim()))).toHaveLength(1);
    // ... and a panel for each mail health metric.
    const panels = dashboardFiles.flatMap((f) => JSON.parse(fs.readFileSync(path.join(CHART, 'dashboards', f), 'utf8')).panels as Obj[]);
    const shown = panels.flatMap((p) => (p.targets ?? []).map((t: Obj) => t.expr as string)).join('\n');
    for (const metric of ['messaging_email_outcomes_total', 'webhook_attempts_total', 'webhook_subscriptions_disabled_total', 'messaging_automation_steps_total', 'mailer_rss_issues_failed_total', 'mailer_broadcasts_failed_total']) {
      expect(shown).toContain(metric);
    }
  });

  test('rules that list workloads by name list every workload', () => {
    const restart = ruleFor((e) => e.includes('kube_pod_container_status_restarts_total'))[0];
    const containers = /container=~"([^"]+)"/.exec(restart.expr)![1].split('|').sort();
    expect(containers).toEqual(WORKLOADS.map((w) => w.name).sort());
    const down = ruleFor((e) => /^up\{/.test(e.trim()))[0];
    const alternation = /\(([^)]+)\)"/.exec(down.expr)![1].split('|').sort();
    expect(alternation).toEqual(WORKLOADS.map((w) => (w.isGateway ? 'gateway-admin' : w.name)).sort());
  });
});
