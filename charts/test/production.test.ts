// The operator's path to production (docs/operations.md): values-production.yaml renders, every object
// validates, and the rendered release has what production needs (nothing generated, external MongoDB
// replica set and NATS over TLS, egress narrowed, HTTPS through an Ingress, autoscaling and budgets);
// the public entry (Ingress or HTTPRoute) agrees with PUBLIC_BASE_URL and the gateway's proxy trust;
// the chart refuses a MongoDB URI without a replica set.
import path from 'node:path';
import { byKind, CHART, CHART_DIR, find, helm, type K8sObject, MONITORING_API, type Obj, readYaml, RELEASE, render, renderFails, selects, validateAll } from './helm';

const PRODUCTION = path.join(CHART, 'values-production.yaml');
const production = readYaml<Obj>(`${CHART_DIR}/values-production.yaml`);
const gatewayName = `${RELEASE}-gateway`;
/** Production renders without the test defaults (REQUIRED): the file must be complete by itself. */
const renderProduction = (args: string[] = []) => render(['-f', PRODUCTION, ...MONITORING_API, ...args], []);
const containers = (objs: K8sObject[]) => byKind(objs, 'Deployment').map((d) => ({ name: d.metadata.name, c: d.spec.template.spec.containers[0] as Obj }));
/** A string value as given (--set would split it at commas). */
const set = (key: string, value: string) => ['--set-json', `${key}=${JSON.stringify(value)}`];
const envOf = (c: Obj): Record<string, Obj> => Object.fromEntries((c.env ?? []).map((e: Obj) => [e.name, e]));

describe('values-production.yaml', () => {
  const objs = renderProduction();
  const workloads = byKind(objs, 'Deployment').map((d) => d.metadata.name.replace(`${RELEASE}-`, ''));
  const configMap = find(objs, 'ConfigMap', RELEASE);

  test('lints and renders every object valid for its Kubernetes model', () => {
    const lint = helm(['lint', '--strict', CHART_DIR, '-f', PRODUCTION]);
    expect(`${lint.stdout}${lint.stderr}`).toContain('1 chart(s) linted, 0 chart(s) failed');
    validateAll(objs);
    expect(workloads.sort()).toEqual(['form', 'gateway', 'messaging', 'rss', 'segment', 'subscriber', 'webhook']);
  });

  test('nothing is generated: the only Secret is the NATS users (variable names, no hash), every key comes from Secrets the operator manages, and two renders are identical', () => {
    expect(byKind(objs, 'Secret').map((s) => s.metadata.name)).toEqual([`${RELEASE}-nats-users`]);
    const usersConf = Buffer.from(find(objs, 'Secret', `${RELEASE}-nats-users`).data['users.conf'], 'base64').toString('utf8');
    expect(usersConf).not.toMatch(/\$2a\$/);
    expect(usersConf.match(/"password": \$MAILER_[A-Z]+_PASSWORD,/g)).toHaveLength(workloads.length);
    const managed = [production.secrets.existingSecret, production.mongodb.passwordSecret.name];
    for (const { name, c } of containers(objs)) {
      for (const e of c.env.filter((x: Obj) => x.valueFrom?.secretKeyRef)) expect({ name, ref: managed.includes(e.valueFrom.secretKeyRef.name) }).toEqual({ name, ref: true });
    }
    // Random values (a generated key, a bcrypt salt) would differ between two renders.
    const once = () => helm(['template', RELEASE, CHART_DIR, '-f', PRODUCTION, ...MONITORING_API]).stdout;
    expect(once()).toBe(once());
  });

  test('MongoDB: a replica set in the URI, the password from its own Secret, completed by Kubernetes', () => {
    for (const { name, c } of containers(objs).filter((x) => x.name !== gatewayName)) {
      const env = envOf(c);
      expect({ name, uri: env.MONGODB_URI.value }).toEqual({ name, uri: expect.stringMatching(/^mongodb:\/\/mailer:\$\(MONGODB_PASSWORD\)@[^?]+\?(.*&)?replicaSet=[^&]+/) });
      // $(VAR) is expanded only from variables defined before it.
      const names = c.env.map((e: Obj) => e.name);
      expect(names.indexOf('MONGODB_PASSWORD')).toBeLessThan(names.indexOf('MONGODB_URI'));
      expect(env.MONGODB_PASSWORD.valueFrom.secretKeyRef).toEqual(production.mongodb.passwordSecret);
    }
    expect(envOf(containers(objs).find((x) => x.name === gatewayName)!.c).MONGODB_URI).toBeUndefined();
  });

  test('NATS over TLS with a user per workload, streams and buckets on three servers; sending domains must be verified; the guard stays strict', () => {
    expect(configMap.data.NATS_URL).toMatch(/^tls:\/\//);
    expect(configMap.data.NATS_REPLICAS).toBe('3');
    for (const { name, c } of containers(objs)) {
      const env = envOf(c);
      expect({ name, ca: env.NATS_TLS_CA?.value, user: env.NATS_USER?.value }).toEqual({ name, ca: '/etc/mailer/nats-tls/ca.crt', user: name.replace(`${RELEASE}-`, 'mailer-') });
    }
    const messaging = envOf(containers(objs).find((x) => x.name === `${RELEASE}-messaging`)!.c);
    expect(messaging.MAIL_DOMAIN_VERIFICATION.value).toBe('required');
    for (const name of ['rss', 'webhook']) expect(envOf(containers(objs).find((x) => x.name === `${RELEASE}-${name}`)!.c).OUTBOUND_ALLOW_HTTP.value).toBe('false');
  });

  test('every workload: resources requested, probes, an HPA owning its replicas, a PDB; a shutdown delay the grace period outlasts', () => {
    for (const d of byKind(objs, 'Deployment')) {
      const c = d.spec.template.spec.containers[0];
      expect(c.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.anything() });
      expect(c.resources.limits.memory).toBeDefined();
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(c[probe]).toBeDefined();
      expect(d.spec.replicas).toBeUndefined();
      const hpa = find(objs, 'HorizontalPodAutoscaler', d.metadata.name);
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(selects(find(objs, 'PodDisruptionBudget', d.metadata.name).spec.selector, d.spec.template.metadata.labels)).toBe(true);
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(production.shutdownDelaySeconds + 15);
    }
    expect(configMap.data.SHUTDOWN_DELAY_MS).toBe(String(production.shutdownDelaySeconds * 1000));
  });

  test('every workload has an egress policy: DNS, NATS and MongoDB narrowed to where they run, SMTP for messaging only, the internet for rss and webhook only', () => {
    for (const name of workloads) {
      const policy = find(objs, 'NetworkPolicy', `${RELEASE}-${name}`);
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      const rules: Obj[] = policy.spec.egress;
      const rulesOn = (port: number) => rules.filter((r) => r.ports?.some((p: Obj) => p.port === port));
      for (const port of [53, 4222, ...(name === 'gateway' ? [] : [27017])]) {
        expect({ name, port, narrowed: rulesOn(port).length > 0 && rulesOn(port).every((r) => r.to?.length > 0) }).toEqual({ name, port, narrowed: true });
      }
      expect({ name, smtp: rulesOn(587).length > 0 }).toEqual({ name, smtp: name === 'messaging' });
      expect({ name, internet: rules.some((r) => !r.ports && r.to?.some((p: Obj) => p.ipBlock?.cidr === '0.0.0.0/0')) }).toEqual({ name, internet: ['rss', 'webhook'].includes(name) });
      // No rule is open to any destination on any port.
      expect(rules.every((r) => r.ports || r.to)).toBe(true);
    }
    // The gateway's public port admits the ingress controller only.
    const http = find(objs, 'NetworkPolicy', gatewayName).spec.ingress.find((r: Obj) => r.ports.some((p: Obj) => p.port === 'http'));
    expect(http.from).toEqual(production.networkPolicy.httpFrom);
  });

  test('HTTPS: the Ingress terminates TLS for the host of PUBLIC_BASE_URL and sends it to the gateway\'s public port, behind one trusted proxy', () => {
    const ingress = find(objs, 'Ingress', gatewayName);
    const host = new URL(configMap.data.PUBLIC_BASE_URL).host;
    expect(configMap.data.PUBLIC_BASE_URL).toBe('https://mail.example.com');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.tls).toEqual([{ hosts: [host], secretName: 'mailer-tls' }]);
    expect(ingress.spec.rules).toEqual([{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: gatewayName, port: { name: 'http' } } } }] } }]);
    expect(envOf(containers(objs).find((x) => x.name === gatewayName)!.c).GATEWAY_TRUST_PROXY.value).toBe('1');
  });
});

describe('the public entry', () => {
  const ingressOn = ['--set', 'ingress.enabled=true'];
  const routeOn = ['--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public', '--set', 'httpRoute.parentRefs[0].namespace=gateway-system'];

  test('is off by default', () => {
    const objs = render();
    expect(byKind(objs, 'Ingress')).toEqual([]);
    expect(byKind(objs, 'HTTPRoute')).toEqual([]);
  });

  test('the Ingress routes every path of each host to the gateway\'s public Service only, never the admin or metrics ports', () => {
    const objs = render([...ingressOn, '--set', 'ingress.hosts={mail.example.org,api.example.org}', '--set', 'ingress.className=public', '--set', 'ingress.annotations.a=b']);
    validateAll(objs);
    const ingress = find(objs, 'Ingress', gatewayName);
    expect(ingress.metadata.annotations).toEqual({ a: 'b' });
    expect(ingress.spec.tls).toEqual([{ hosts: ['mail.example.org', 'api.example.org'], secretName: `${RELEASE}-tls` }]);
    const backends = ingress.spec.rules.flatMap((r: Obj) => r.http.paths.map((p: Obj) => ({ host: r.host, path: p.path, ...p.backend.service })));
    expect(backends).toEqual(['mail.example.org', 'api.example.org'].map((host) => ({ host, path: '/', name: gatewayName, port: { name: 'http' } })));
    const service = find(objs, 'Service', gatewayName);
    expect(service.spec.ports.map((p: Obj) => p.name)).toEqual(['http']);
  });

  test('PUBLIC_BASE_URL follows the Ingress when not given: https, or http without TLS', () => {
    const base = (args: string[]) => find(render([...ingressOn, '--set', 'mail.publicBaseUrl=', ...args]), 'ConfigMap', RELEASE).data.PUBLIC_BASE_URL;
    expect(base(['--set', 'ingress.hosts={links.example.net,example.net}'])).toBe('https://links.example.net');
    expect(base(['--set', 'ingress.hosts={links.example.net}', '--set', 'ingress.tls.enabled=false'])).toBe('http://links.example.net');
    expect(renderFails([...ingressOn, '--set', 'mail.publicBaseUrl='])).toContain('mail.publicBaseUrl is required (or ingress.enabled with ingress.hosts)');
  });

  test.each([
    ['TLS while links are http', ['--set', 'mail.publicBaseUrl=http://mail.example.org'], 'ingress.tls.enabled while mail.publicBaseUrl is http://mail.example.org'],
    ['hosts without the host of the links', ['--set', 'ingress.hosts={api.example.org}'], 'ingress.hosts api.example.org does not include mail.example.org'],
    ['links on another port', ['--set', 'mail.publicBaseUrl=https://mail.example.org:8443'], 'must be the root of a host without a port'],
    ['links under a path', ['--set', 'mail.publicBaseUrl=https://example.org/mail'], 'must be the root of a host without a port'],
    ['a gateway that trusts no proxy', ['--set', 'gateway.trustProxy=0'], 'gateway.trustProxy is 0 while the Ingress puts a proxy in front of the gateway'],
    ['no gateway', ['--set', 'gateway.enabled=false'], 'gateway.enabled must be true'],
    ['a host with a port', ['--set', 'ingress.hosts={mail.example.org:443}'], 'hosts'],
  ])('an Ingress is refused with %s', (_label, args, message) => {
    expect(renderFails([...ingressOn, ...(args as string[])])).toContain(message);
  });

  test('the HTTPRoute attaches to the given Gateways and sends every path to the gateway\'s public port, with the same checks', () => {
    const objs = render(routeOn);
    validateAll(objs);
    const route = find(objs, 'HTTPRoute', gatewayName);
    expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route.spec).toEqual({
      parentRefs: [{ name: 'public', namespace: 'gateway-system' }],
      hostnames: ['mail.example.org'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: gatewayName, port: 8080 }] }],
    });
    expect(renderFails(['--set', 'httpRoute.enabled=true'])).toContain('httpRoute.parentRefs is required');
    expect(renderFails([...routeOn, '--set', 'httpRoute.hostnames={api.example.org}'])).toContain('httpRoute.hostnames api.example.org does not include mail.example.org');
    expect(renderFails([...routeOn, '--set', 'gateway.trustProxy=0'])).toContain('while the HTTPRoute puts a proxy');
  });
});

describe('MongoDB needs a replica set (the services write in transactions)', () => {
  const secretUri = (objs: K8sObject[]) => Buffer.from(find(objs, 'Secret', RELEASE).data.MONGODB_URI, 'base64').toString('utf8');

  test('the default URI names one, and so must a given one, unless mongos routers are declared', () => {
    expect(secretUri(render())).toMatch(/[?&]replicaSet=rs0\b/);
    const refused = renderFails(['--set', 'secrets.mongodbUri=mongodb://mailer:hunter2-secret@db:27017/mailer']);
    expect(refused).toContain('secrets.mongodbUri names no replica set');
    expect(refused).not.toContain('hunter2-secret');
    expect(secretUri(render(['--set', 'secrets.mongodbUri=mongodb+srv://mailer:pw@cluster0.example.net/']))).toMatch(/^mongodb\+srv:/);
    expect(secretUri(render([...set('secrets.mongodbUri', 'mongodb://mongos-0:27017,mongos-1:27017'), '--set', 'mongodb.requireReplicaSet=false']))).toBe('mongodb://mongos-0:27017,mongos-1:27017');
  });

  test('mongodb.uri replaces the Secret\'s URI, with the password substituted from its own Secret, and is checked too', () => {
    const uri = 'mongodb://mailer:$(MONGODB_PASSWORD)@db-0:27017,db-1:27017/?replicaSet=rs0';
    const objs = render([...set('mongodb.uri', uri), '--set', 'mongodb.passwordSecret.name=db-user']);
    validateAll(objs);
    expect(find(objs, 'Secret', RELEASE).data.MONGODB_URI).toBeUndefined();
    const env = envOf(containers(objs).find((x) => x.name === `${RELEASE}-subscriber`)!.c);
    expect(env.MONGODB_URI).toEqual({ name: 'MONGODB_URI', value: uri });
    expect(env.MONGODB_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: 'db-user', key: 'password' });
    // With existingSecret, that Secret needs no MONGODB_URI either.
    const existing = render([...set('mongodb.uri', uri), '--set', 'mongodb.passwordSecret.name=db-user', '--set', 'secrets.existingSecret=mine']);
    expect(containers(existing).flatMap(({ c }) => c.env).filter((e: Obj) => e.valueFrom?.secretKeyRef?.key === 'MONGODB_URI')).toEqual([]);
    expect(renderFails([...set('mongodb.uri', 'mongodb://mailer:$(MONGODB_PASSWORD)@db:27017/'), '--set', 'mongodb.passwordSecret.name=db-user'])).toContain('mongodb.uri names no replica set');
    expect(renderFails([...set('mongodb.uri', 'mongodb://db:27017/?replicaSet=rs0'), '--set', 'mongodb.passwordSecret.name=db-user'])).toContain('mongodb.uri must contain $(MONGODB_PASSWORD)');
    expect(renderFails([...set('mongodb.uri', uri)])).toContain('mongodb.uri must contain $(MONGODB_PASSWORD)');
  });
});
