// Every metric the chart's alert rules and dashboards query is exported by a running process: an
// alert on a series nobody exports never fires, a panel on one stays empty, and neither says so.
// Real processes (nats-server, the gateway and all six services; the subscriber and segment
// services own the outbox and the durable consumers seen here); every /metrics endpoint is scraped
// and the metric names are read from the PromQL of charts/mailer/alerts/*.yaml and
// charts/mailer/dashboards/*.json. Right after start, before any mail, bounce or webhook: counters
// that only appeared with their first event would leave an alert's rate or ratio empty until then.
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { startService, type RunningService } from '@mailer/testing';
import { call, sleep } from '../../gateway/test/support/harness';
import { startWiredStack, type WiredStack } from '../../gateway/test/support/segment-wired-stack';

const CHART = path.resolve(__dirname, '../mailer');

const selections: Array<{ name: string; label: string; value: string; where: string }> = [];

/** Metrics the chart reads from exporters outside this repository; nothing of ours must export them. */
const EXTERNAL: Record<string, string> = {
  up: "Prometheus' own series for every scrape target (MailerMetricsTargetDown)",
  kube_pod_container_status_restarts_total: 'kube-state-metrics (MailerPodRestarting and the restarts panel)',
};

// PromQL words that look like metric names but are not: aggregation modifiers, operators, keywords.
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * Metric names in a PromQL expression: strings, label matchers ({...}), ranges ([...]) and grouping
 * label lists (by/without/on/ignoring/group_x (...)) removed; what remains that is an identifier not
 * called as a function is a metric name. Histogram series (_bucket, _sum, _count) name their family.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)) {
    if (!KEYWORDS.has(m[1].toLowerCase())) names.add(m[1]);
  }
  return [...names];
}

/**
 * The label values a PromQL expression selects with `=` (`name{label="value"}`), per metric name: a
 * ratio over `outcome="bounced"` needs that very series to exist, not only its family.
 */
export function selectedLabels(expr: string): Array<{ name: string; label: string; value: string }> {
  const out: Array<{ name: string; label: string; value: string }> = [];
  for (const m of expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)) {
    for (const [, label, value] of m[2].matchAll(/(\w+)\s*=\s*"([^"$]*)"/g)) out.push({ name: m[1], label, value });
  }
  return out;
}

/** Where each metric name is used (alert name or dashboard panel title), and the label values selected. */
function chartMetrics(): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const add = (expr: string, where: string) => {
    for (const name of metricNames(expr)) uses.set(name, [...(uses.get(name) ?? []), where]);
    selections.push(...selectedLabels(expr).map((s) => ({ ...s, where })));
  };
  for (const f of fs.readdirSync(path.join(CHART, 'alerts')).filter((x) => x.endsWith('.yaml'))) {
    const doc = yaml.load(fs.readFileSync(path.join(CHART, 'alerts', f), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    for (const rule of doc.groups.flatMap((g) => g.rules)) add(rule.expr, `alert ${rule.alert}`);
  }
  for (const f of fs.readdirSync(path.join(CHART, 'dashboards')).filter((x) => x.endsWith('.json'))) {
    const d = JSON.parse(fs.readFileSync(path.join(CHART, 'dashboards', f), 'utf8'));
    for (const p of d.panels ?? []) for (const t of p.targets ?? []) add(t.expr, `${f} panel "${p.title}"`);
    // Template variables: Grafana's label_values(metric, label) names the metric first.
    for (const v of d.templating?.list ?? []) {
      const q = typeof v.query === 'string' ? v.query : v.query?.query;
      const m = typeof q === 'string' ? /label_values\(\s*([a-zA-Z_:][\w:]*)\s*,/.exec(q) : null;
      if (m) uses.set(m[1], [...(uses.get(m[1]) ?? []), `${f} variable ${v.name}`]);
    }
  }
  return uses;
}

/** Metric families a scrape declares (# TYPE lines), with their type. */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1], m[2]);
  return out;
}

function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('metric name extraction', () => {
  it('reads metric names and ignores functions, labels, grouping, ranges, strings and Grafana variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{namespace=~"$namespace", route=~"a|b"}[$__rate_interval]))) > 1 and on (x) sum without (le) (foo_total) / ignoring(y) group_left(z) bar:ratio offset 5m',
      ).sort(),
    ).toEqual(['bar:ratio', 'foo_total', 'http_request_duration_seconds_bucket']);
    expect(metricNames('up{service=~".*-(gateway-admin|subscriber)"} == 0')).toEqual(['up']);
    expect(metricNames('max by (namespace) (deriv(jetstream_consumer_lag[15m])) > 0')).toEqual(['jetstream_consumer_lag']);
  });

  it('reads the label values selected with =, not regular expressions or Grafana variables', () => {
    expect(selectedLabels('sum(increase(a_total{namespace=~"$namespace", outcome="bounced"}[1h])) / sum(a_total{outcome = "sent", x!="y", svc="$service"})')).toEqual([
      { name: 'a_total', label: 'outcome', value: 'bounced' },
      { name: 'a_total', label: 'outcome', value: 'sent' },
    ]);
  });
});

describe('the chart queries only metrics that are exported', () => {
  let env: WiredStack;
  const others: RunningService[] = [];
  const scraped: Record<string, string> = {};

  beforeAll(async () => {
    env = await startWiredStack();
    const nats = { NATS_URL: env.stack.nats.url, SUBSCRIBER_GRPC_ADDR: env.subscriber.address, SEGMENT_GRPC_ADDR: env.segment.address };
    for (const name of ['form', 'rss', 'messaging', 'webhook'] as const) others.push(await startService(name, nats));
    // Traffic through the gateway and both services (a write: DOMAIN events for the segment
    // service's projection consumer), so labelled series exist as well as their families.
    const a = await env.account('metrics');
    expect((await a.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann' })).status).toBe(201);
    const expression = { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'a' } }] }] };
    const seg = await a.post('/segments', { name: 'A', expression });
    expect(seg.status).toBe(201);
    expect((await a.get(`/segments/${seg.json.id}/count`)).status).toBe(200);
    const urls: Record<string, string> = {
      gateway: env.gw.metricsUrl,
      subscriber: `http://127.0.0.1:${env.subscriber.ready.metricsPort}/metrics`,
      segment: `http://127.0.0.1:${env.segment.ready.metricsPort}/metrics`,
      ...Object.fromEntries(others.map((o) => [o.name, `http://127.0.0.1:${(o.ready as { metricsPort: number }).metricsPort}/metrics`])),
    };
    // The consumer gauges appear after the first consumer-info poll, right after start.
    const deadline = Date.now() + 30_000;
    for (;;) {
      for (const [name, url] of Object.entries(urls)) scraped[name] = (await call(url, 'GET', '')).text;
      if (samples(scraped.segment, 'jetstream_consumer_lag').length > 0 || Date.now() > deadline) break;
      await sleep(250);
    }
  }, 180_000);
  afterAll(async () => {
    for (const o of others) await o.stop();
    await env?.stop();
  });

  it('every metric named in an alert or a dashboard is exported by a process (or listed as external, with the reason)', () => {
    const uses = chartMetrics();
    expect(uses.size).toBeGreaterThan(5);
    const exported = new Map<string, string>();
    for (const text of Object.values(scraped)) for (const [name, type] of families(text)) exported.set(name, type);
    const missing: string[] = [];
    for (const [name, where] of uses) {
      if (EXTERNAL[name]) continue;
      const family = name.replace(/_(bucket|sum|count)$/, '');
      const ok = exported.has(name) || (family !== name && exported.get(family) === 'histogram');
      if (!ok) missing.push(`${name} (used by ${where.join(', ')})`);
    }
    // Each series exists from the start (at 0), also those only an event would otherwise create ...
    const all = Object.values(scraped).join('\n');
    const empty = [...uses.keys()].filter((name) => !EXTERNAL[name] && exported.has(name.replace(/_(bucket|sum|count)$/, '')) && samples(all, name).length === 0);
    // ... with every label value an alert or panel selects (a bounce ratio needs outcome="bounced").
    const absent = selections
      .filter((s) => !EXTERNAL[s.name])
      .filter((s) => !samples(all, s.name).some((l) => l.includes(`${s.label}="${s.value}"`)))
      .map((s) => `${s.name}{${s.label}="${s.value}"} (used by ${s.where})`);
    expect({ missing, empty, absent: [...new Set(absent)] }).toEqual({ missing: [], empty: [], absent: [] });
    // The external list stays honest: each entry is used by the chart and exported by nothing of ours.
    for (const name of Object.keys(EXTERNAL)) {
      expect(uses.has(name)).toBe(true);
      expect(exported.has(name)).toBe(false);
    }
  });

  it('the segment service exports its projection consumer backlog; the subscriber service its outbox backlog', () => {
    const lag = samples(scraped.segment, 'jetstream_consumer_lag');
    expect(lag).toEqual([expect.stringMatching(/^jetstream_consumer_lag\{stream="DOMAIN",consumer="[^"]+",service="segment"\} \d+$/)]);
    for (const name of ['jetstream_consumer_pending_messages', 'jetstream_consumer_ack_pending_messages', 'jetstream_consumer_redelivered_messages']) {
      expect(samples(scraped.segment, name)).toEqual([expect.stringMatching(/\{stream="DOMAIN",consumer="[^"]+",service="segment"\} \d+$/)]);
    }
    // The subscriber service consumes nothing (yet): no consumer series of its own.
    expect(samples(scraped.subscriber, 'jetstream_consumer_lag')).toEqual([]);
    expect(samples(scraped.subscriber, 'outbox_pending_events')).toEqual([expect.stringMatching(/^outbox_pending_events\{service="subscriber"\} \d+$/)]);
  });

  it('every process exports mailer_build_info with its package version and Node.js version', () => {
    for (const [name, text] of Object.entries(scraped)) {
      const dir = name === 'gateway' ? 'gateway' : `services/${name}`;
      const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../..', dir, 'package.json'), 'utf8'));
      expect(samples(text, 'mailer_build_info')).toEqual([`mailer_build_info{version="${version}",node="${process.version}",service="${name}"} 1`]);
    }
  });
});
