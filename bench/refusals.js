#!/usr/bin/env node
// bench/refusals: how fast hostile input is refused, in process (no servers). The tests assert that
// each input is refused and by which limit; how long a refusal takes is measured here.
// - Templates (@mailer/templates): each hostile template of packages/templates/test/template.test.ts,
//   refused by the render-time, memory or output limit, beside a harmless render interleaved with it.
// - Report periods (@mailer/reports): a period over the whole calendar, refused as too many points
//   without building its buckets, beside a valid period of 1,000 daily points.
// Figures per refusal: median wall time and CPU time over `--rounds`; ratio = refusal / baseline.
// Usage: npm run bench:refusals [-- --rounds 5]
'use strict';
const os = require('node:os');
const { parseArgs } = require('node:util');
const { compileTemplate, renderTemplate, RENDER_LIMIT_MS } = require('@mailer/templates');
const { parseReportPeriod } = require('@mailer/reports');
const { verdict } = require('./lib');

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(args.rounds);
const subscriber = { email: 'ann@example.com', firstName: 'Ann', fields: {} };
const big = (n) => ({ substitutionData: { big: 'x'.repeat(n) } });
const loop = '{% for a in (1..10000) %}{% for b in (1..10000) %}y{% endfor %}{% endfor %}';
const grow = '{% capture s %}{% for i in (1..100000) %}{{ big }}{% endfor %}{% endcapture %}{{ s | size }}';

/** [name, source, values, the refusal it must end in] */
const TEMPLATES = [
  ['billion-iteration range', { subject: 's', html: '{% for i in (1..1000000000) %}x{% endfor %}' }, {}, 'memory alloc limit'],
  ['three nested loops', { subject: 's', html: '{% for a in (1..100000) %}{% for b in (1..100000) %}{% for c in (1..100000) %}x{% endfor %}{% endfor %}{% endfor %}' }, {}, 'render limit'],
  ['nested loops in the subject', { subject: loop, html: 'h' }, {}, 'render limit'],
  ['append repeats', { subject: 's', html: '{% for i in (1..100000) %}{{ big | append: big | append: big }}{% endfor %}' }, big(100_000), 'output exceeds'],
  ['assign doubling', { subject: 's', html: '{% assign s = "xxxxxxxxxxxxxxxx" %}' + '{% assign s = s | append: s %}'.repeat(40) + '{{ s | size }}' }, {}, 'memory alloc limit'],
  ['loop printing a large value', { subject: 's', html: '{% for i in (1..10000) %}{{ big }}{% endfor %}' }, big(10_000), 'output exceeds'],
  ['capture growing in a loop', { subject: 's', html: grow }, big(10_000), 'output exceeds'],
];
const HARMLESS = compileTemplate({ subject: 'Hi {{ subscriber.firstName }}', html: '{% for i in (1..40) %}<p>{{ i }}</p>{% endfor %}' });

/** Wall and CPU milliseconds of one call of `fn`. */
async function timed(fn) {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - t, cpu: (used.user + used.system) / 1000 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => +x.toFixed(x < 10 ? 2 : 0);

/** `rounds` of baseline then case, interleaved; the case must throw an error matching `refusal`. */
async function compare(baseline, hostile, refusal) {
  const b = [];
  const h = [];
  for (let r = 0; r < rounds; r++) {
    b.push(await timed(baseline));
    h.push(await timed(async () => {
      const err = await Promise.resolve().then(hostile).then(() => undefined, (e) => e);
      if (!err || !refusal.test(err.message)) throw new Error(`not refused as expected (${refusal}): ${err ? err.message : 'accepted'}`);
    }));
  }
  return { wall: median(h.map((x) => x.wall)), cpu: median(h.map((x) => x.cpu)), baseline: median(b.map((x) => x.wall)) };
}

async function main() {
  const rows = {};
  for (const [name, source, values, refusal] of TEMPLATES) {
    const compiled = compileTemplate(source);
    const f = await compare(() => renderTemplate(HARMLESS, { subscriber }), () => renderTemplate(compiled, { subscriber, ...values }), new RegExp(refusal));
    rows[`template: ${name}`] = { refused: refusal, 'wall ms': ms(f.wall), 'CPU ms': ms(f.cpu), 'baseline ms': ms(f.baseline), ratio: +(f.wall / f.baseline).toFixed(2), 'share of the render limit': +(f.wall / RENDER_LIMIT_MS).toFixed(2), verdict: verdict(f.wall < 2 * RENDER_LIMIT_MS) };
  }
  const period = await compare(
    () => parseReportPeriod({ fromDate: '2024-01-01', toDate: '2026-09-26', interval: 'DAY' }),
    () => parseReportPeriod({ fromDate: '0001-01-01', toDate: '9999-12-31', interval: 'DAY' }),
    /points/,
  );
  rows['report period: the whole calendar by day'] = { refused: 'too many points', 'wall ms': ms(period.wall), 'CPU ms': ms(period.cpu), 'baseline ms': ms(period.baseline), ratio: +(period.wall / period.baseline).toFixed(2), 'share of the render limit': '', verdict: verdict(period.wall < 10 * Math.max(period.baseline, 0.1)) };
  console.log(`\nbench/refusals (${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}), median of ${rounds} rounds`);
  console.table(rows);
  console.log(`  baseline: a harmless 40-item render (templates), a valid 1,000-day period (report); targets: a template refused within 2x its ${RENDER_LIMIT_MS} ms render limit, the period within 10x the valid one`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
