// Rendering the chart with the pinned helm, and validating what it renders: every object against
// its Kubernetes model (kubernetes-models), or, for the custom resources the chart may render
// (prometheus-operator's, the Gateway API's HTTPRoute), against the fields the chart writes.
// Shared by the chart tests.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';

export const ROOT = path.resolve(__dirname, '../..');
export const CHART_DIR = 'charts/mailer';
export const CHART = path.join(ROOT, CHART_DIR);
const HELM = path.join(ROOT, 'node_modules/.bin/helm');
export const RELEASE = 'mailer';
export const NAMESPACE = 'mailer-test';
export const FULL_VALUES = path.join(CHART, 'ci/full-values.yaml');
export const MONITORING_API = ['--api-versions', 'monitoring.coreos.com/v1'];
// The values an install must give (the chart fails without them, see 'email' in chart.test.ts); given first,
// so a test's own arguments override them.
export const REQUIRED = ['--set', 'mail.publicBaseUrl=https://mail.example.org', '--set', 'mail.bounceDomain=bounces.example.org'];

// ---------------------------------------------------------------------------------------------
// Types and helpers

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Obj = Record<string, any>;
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

function run(cmd: string, args: string[]) {
  const res = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  if (res.error) throw res.error;
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

export function helm(args: string[]) {
  return run(HELM, args);
}

/** `helm template`; throws with helm's message when it fails. */
export function render(args: string[] = [], required = REQUIRED): K8sObject[] {
  const res = helm(['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...required, ...args]);
  if (res.status !== 0) throw new Error(`helm template ${args.join(' ')} failed:\n${res.stderr}`);
  return yaml.loadAll(res.stdout).filter((doc): doc is K8sObject => doc !== null && doc !== undefined);
}

/** `helm template` that must fail; returns helm's error output. */
export function renderFails(args: string[], required = REQUIRED): string {
  const res = helm(['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...required, ...args]);
  expect(res.status).not.toBe(0);
  return res.stderr;
}

export function writeTempValues(values: Obj): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-chart-'));
  const file = path.join(dir, 'values.yaml');
  fs.writeFileSync(file, yaml.dump(values));
  return file;
}

export function readYaml<T = Obj>(rel: string): T {
  return yaml.load(fs.readFileSync(path.join(ROOT, rel), 'utf8')) as T;
}

export function byKind(objs: K8sObject[], kind: string): K8sObject[] {
  return objs.filter((o) => o.kind === kind);
}

export function find(objs: K8sObject[], kind: string, name: string): K8sObject {
  const found = objs.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected exactly one ${kind}/${name}, found ${found.length}`);
  return found[0];
}

export function getPath(obj: Obj, dotted: string): unknown {
  return dotted.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), obj);
}

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions; {} selects all). */
export function selects(selector: LabelSelector | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    switch (e.operator) {
      case 'In': if (!has || !(e.values ?? []).includes(labels[e.key])) return false; break;
      case 'NotIn': if (has && (e.values ?? []).includes(labels[e.key])) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: throw new Error(`unknown selector operator ${e.operator}`);
    }
  }
  return true;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

// ---------------------------------------------------------------------------------------------
// Validation of every rendered object

function validateServiceMonitor(o: K8sObject): void {
  const spec = o.spec;
  if (!spec || typeof spec !== 'object') throw new Error('ServiceMonitor without spec');
  if (!spec.selector || (!spec.selector.matchLabels && !spec.selector.matchExpressions)) {
    throw new Error('ServiceMonitor.spec.selector must select something');
  }
  if (spec.namespaceSelector && !Array.isArray(spec.namespaceSelector.matchNames) && spec.namespaceSelector.any !== true) {
    throw new Error('ServiceMonitor.spec.namespaceSelector needs matchNames or any');
  }
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0) throw new Error('ServiceMonitor without endpoints');
  const duration = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;
  const allowed = new Set(['port', 'targetPort', 'path', 'scheme', 'interval', 'scrapeTimeout', 'honorLabels', 'honorTimestamps', 'relabelings', 'metricRelabelings', 'tlsConfig', 'params']);
  for (const ep of spec.endpoints) {
    for (const key of Object.keys(ep)) if (!allowed.has(key)) throw new Error(`unknown ServiceMonitor endpoint field ${key}`);
    if (typeof ep.port !== 'string' || !ep.port) throw new Error('ServiceMonitor endpoint needs a named port');
    if (ep.path !== undefined && !String(ep.path).startsWith('/')) throw new Error('endpoint path must start with /');
    for (const k of ['interval', 'scrapeTimeout']) {
      if (ep[k] !== undefined && !duration.test(ep[k])) throw new Error(`endpoint ${k} ${ep[k]} is not a Prometheus duration`);
    }
    if (ep.honorLabels !== undefined && typeof ep.honorLabels !== 'boolean') throw new Error('honorLabels must be boolean');
  }
}

export function validateRuleGroups(groups: unknown): void {
  if (!Array.isArray(groups) || groups.length === 0) throw new Error('rule groups must be a non-empty list');
  const names = new Set<string>();
  for (const g of groups as Obj[]) {
    if (typeof g.name !== 'string' || !g.name) throw new Error('rule group without name');
    if (names.has(g.name)) throw new Error(`duplicate rule group ${g.name}`);
    names.add(g.name);
    if (!Array.isArray(g.rules) || g.rules.length === 0) throw new Error(`group ${g.name} without rules`);
    for (const r of g.rules) {
      if (typeof r.alert !== 'string' || !/^[A-Za-z_:][A-Za-z0-9_:]*$/.test(r.alert)) throw new Error(`bad alert name in ${g.name}`);
      if (typeof r.expr !== 'string' || !r.expr.trim()) throw new Error(`${r.alert}: expr missing`);
      if (r.for !== undefined && !/^[0-9]+(ms|s|m|h|d|w|y)$/.test(r.for)) throw new Error(`${r.alert}: bad for ${r.for}`);
      if (!['critical', 'warning', 'info'].includes(r.labels?.severity)) throw new Error(`${r.alert}: severity label missing`);
      if (!r.annotations?.summary || !r.annotations?.description) throw new Error(`${r.alert}: summary/description missing`);
      let depth = 0;
      for (const ch of r.expr) {
        if (ch === '(') depth++;
        if (ch === ')') depth--;
        if (depth < 0) break;
      }
      if (depth !== 0) throw new Error(`${r.alert}: unbalanced parentheses`);
    }
  }
}

function validatePrometheusRule(o: K8sObject): void {
  validateRuleGroups(o.spec?.groups);
}

/** The Gateway API HTTPRoute (v1), as far as the chart writes it: parents, hostnames, path rules to Services. */
function validateHTTPRoute(o: K8sObject): void {
  const spec = o.spec;
  const known = (obj: Obj, keys: string[], what: string) => {
    for (const k of Object.keys(obj)) if (!keys.includes(k)) throw new Error(`unknown ${what} field ${k}`);
  };
  known(spec ?? {}, ['parentRefs', 'hostnames', 'rules'], 'HTTPRoute.spec');
  if (!Array.isArray(spec?.parentRefs) || spec.parentRefs.length === 0 || spec.parentRefs.length > 32) throw new Error('HTTPRoute needs 1-32 parentRefs');
  for (const ref of spec.parentRefs) {
    known(ref, ['group', 'kind', 'namespace', 'name', 'sectionName', 'port'], 'parentRef');
    if (typeof ref.name !== 'string' || !DNS_SUBDOMAIN.test(ref.name)) throw new Error(`parentRef name ${ref.name} is not a DNS subdomain`);
  }
  // Gateway API Hostname: a DNS name (optionally a leading "*."), no IP, no port.
  const hostname = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  for (const h of spec.hostnames ?? []) if (typeof h !== 'string' || h.length > 253 || !hostname.test(h)) throw new Error(`bad hostname ${h}`);
  if (!Array.isArray(spec.rules) || spec.rules.length === 0 || spec.rules.length > 16) throw new Error('HTTPRoute needs 1-16 rules');
  for (const rule of spec.rules) {
    known(rule, ['matches', 'backendRefs'], 'rule');
    for (const m of rule.matches ?? []) {
      known(m, ['path'], 'match');
      if (!['Exact', 'PathPrefix', 'RegularExpression'].includes(m.path?.type) || !String(m.path?.value).startsWith('/')) throw new Error('a path match needs a type and a value starting with /');
    }
    for (const b of rule.backendRefs ?? []) {
      known(b, ['name', 'port', 'kind', 'group', 'namespace', 'weight'], 'backendRef');
      if (!DNS_SUBDOMAIN.test(b.name) || !Number.isInteger(b.port) || b.port < 1 || b.port > 65535) throw new Error('a Service backendRef needs a name and a port');
    }
  }
}

const MODELS: Record<string, (o: K8sObject) => void> = {
  'apps/v1/Deployment': (o) => new Deployment(o as any).validate(),
  'v1/Service': (o) => new Service(o as any).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as any).validate(),
  'v1/Secret': (o) => new Secret(o as any).validate(),
  'v1/ServiceAccount': (o) => new ServiceAccount(o as any).validate(),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o as any).validate(),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o as any).validate(),
  'networking.k8s.io/v1/NetworkPolicy': (o) => new NetworkPolicy(o as any).validate(),
  'networking.k8s.io/v1/Ingress': (o) => new Ingress(o as any).validate(),
  'gateway.networking.k8s.io/v1/HTTPRoute': validateHTTPRoute,
  'monitoring.coreos.com/v1/ServiceMonitor': validateServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': validatePrometheusRule,
};

export function validateAll(objs: K8sObject[]): void {
  expect(objs.length).toBeGreaterThan(0);
  const seen = new Set<string>();
  for (const o of objs) {
    const key = `${o.apiVersion}/${o.kind}`;
    const validate = MODELS[key];
    if (!validate) throw new Error(`no validator for rendered ${key} ${o.metadata?.name}: add one to MODELS`);
    try {
      validate(o);
    } catch (err) {
      throw new Error(`${key} ${o.metadata?.name} is invalid: ${(err as Error).message}`);
    }
    expect(o.metadata.name).toMatch(DNS_LABEL);
    expect(o.metadata.namespace ?? NAMESPACE).toBe(NAMESPACE);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
      expect(typeof v).toBe('string');
      if (!LABEL_VALUE.test(v)) throw new Error(`${key} ${o.metadata.name}: label ${k}=${v} is not a valid label value`);
    }
    const id = `${key}/${o.metadata.name}`;
    if (seen.has(id)) throw new Error(`rendered twice: ${id}`);
    seen.add(id);
  }
}

