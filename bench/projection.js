#!/usr/bin/env node
// bench/projection: contact projection catch-up. A backlog of DOMAIN events (subscriber.created /
// updated and their fact events, some deletions, catalog events; built with the subscriber service's
// own event builders) is published to a fresh nats-server; then a fresh segment service (real
// process, empty data dir, new durable) starts and the time until its applied watermark
// (`segment_projection_applied_sequence` on its metrics port) reaches the stream's last sequence is
// measured. Baseline, same run, same stream: a bare nats.js pull consumer that only acks.
// Target (issue 4): >= 10,000 events/s applied.
// Usage: npm run bench:projection [-- --accounts 20 --subscribers 1500 --changes 2 --runs 3]
'use strict';
const { parseArgs } = require('node:util');
const fs = require('node:fs');
const { connect, JSONCodec, AckPolicy, DeliverPolicy } = require('nats');
const { ensureStreams } = require('@mailer/nats');
const { startNatsServer, startService, operatorAuth } = require('@mailer/testing');
const { createdEvent, changeEvents, deletedEvent } = require('../services/subscriber/dist/events/subscriber-events');
const { tagEvent, topicEvent } = require('../services/subscriber/dist/events/catalog-events');
const { diffSubscriber } = require('../services/subscriber/dist/domain/contacts');
const { verdict } = require('./lib');

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '20' },
    subscribers: { type: 'string', default: '1500' },
    changes: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
  },
});
const accountCount = Number(args.accounts);
const perAccount = Number(args.subscribers);
const changeRounds = Number(args.changes);
const runs = Number(args.runs);

// ------------------------------------------------------------------ backlog

/** Deterministic pseudo-random numbers, so every run publishes the same backlog. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

function accountCatalog(a) {
  const fields = [
    { id: `${a}-f-company`, fieldType: 'TEXT', personalizationTagName: 'COMPANY' },
    { id: `${a}-f-score`, fieldType: 'NUMBER', personalizationTagName: 'SCORE' },
    { id: `${a}-f-birthday`, fieldType: 'DATE', personalizationTagName: 'BIRTHDAY' },
    { id: `${a}-f-vip`, fieldType: 'BOOLEAN', personalizationTagName: 'VIP' },
    { id: `${a}-f-plan`, fieldType: 'SINGLE_CHOICE', personalizationTagName: 'PLAN' },
    { id: `${a}-f-interests`, fieldType: 'MULTI_CHOICE', personalizationTagName: 'INTERESTS' },
  ].map((f, position) => ({ label: f.personalizationTagName, required: false, internal: false, active: true, position, options: [], ...f }));
  const labels = { a: 'Alpha', b: 'Beta', c: 'Gamma', d: 'Delta' };
  return {
    fields,
    byId: new Map(fields.map((f) => [f.id, f])),
    option: (_fieldId, optionId) => (labels[optionId] ? { id: optionId, label: labels[optionId] } : undefined),
    tags: Array.from({ length: 12 }, (_, i) => `${a}-tag-${i}`),
    topics: Array.from({ length: 5 }, (_, i) => `${a}-topic-${i}`),
  };
}

function randomFields(r, cat) {
  const f = {};
  const [company, score, birthday, vip, plan, interests] = cat.fields.map((x) => x.id);
  if (r() < 0.8) f[company] = `Company ${Math.floor(r() * 500)}`;
  if (r() < 0.7) f[score] = Math.floor(r() * 1000) / 10;
  if (r() < 0.4) f[birthday] = `19${50 + Math.floor(r() * 50)}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}`;
  if (r() < 0.5) f[vip] = r() < 0.3;
  if (r() < 0.6) f[plan] = ['a', 'b', 'c'][Math.floor(r() * 3)];
  if (r() < 0.5) f[interests] = ['a', 'b', 'c', 'd'].filter(() => r() < 0.5);
  return f;
}

const pick = (r, list, n) => [...new Set(Array.from({ length: n }, () => list[Math.floor(r() * list.length)]))].sort();

/**
 * The events, in stream order: every subscriber created (accounts interleaved), then `changeRounds`
 * rounds of changes in random order (tags, topics, opt-outs, fields, status), ~2% deletions, and per
 * account a tag deletion and a topic created with enrolledExistingSubscribers.
 */
function buildBacklog() {
  const r = rng(42);
  const now = '2026-01-01T00:00:00.000Z';
  const out = [];
  const accounts = Array.from({ length: accountCount }, (_, i) => ({ id: `bench-acc-${i}`, cat: accountCatalog(`bench-acc-${i}`), subs: [] }));
  for (let i = 0; i < perAccount; i++) {
    for (const acc of accounts) {
      const s = {
        id: `${acc.id}-sub-${i}`,
        email: `user${i}@${acc.id}.example.org`,
        firstName: r() < 0.7 ? `Name${i}` : null,
        status: r() < 0.9 ? 'ACTIVE' : 'UNCONFIRMED',
        tags: pick(r, acc.cat.tags, Math.floor(r() * 4)),
        topicIds: pick(r, acc.cat.topics, Math.floor(r() * 3)),
        optOuts: [],
        fields: randomFields(r, acc.cat),
        registeredAt: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
        version: 1,
      };
      acc.subs.push(s);
      out.push(createdEvent(acc.id, s, { catalog: acc.cat }, now));
    }
  }
  for (let round = 0; round < changeRounds; round++) {
    const all = accounts.flatMap((acc) => acc.subs.map((s, i) => ({ acc, i })));
    for (let k = all.length - 1; k > 0; k--) {
      const j = Math.floor(r() * (k + 1));
      [all[k], all[j]] = [all[j], all[k]];
    }
    for (const { acc, i } of all) {
      const before = acc.subs[i];
      if (!before) continue;
      if (round === changeRounds - 1 && r() < 0.02) {
        out.push(deletedEvent(acc.id, before, { catalog: acc.cat }, now));
        acc.subs[i] = null;
        continue;
      }
      const after = { ...before, version: before.version + 1, fields: { ...before.fields } };
      const what = r();
      if (what < 0.35) after.tags = pick(r, acc.cat.tags, 1 + Math.floor(r() * 4));
      else if (what < 0.55) after.topicIds = pick(r, acc.cat.topics, 1 + Math.floor(r() * 3));
      else if (what < 0.65) {
        const topicId = acc.cat.topics[Math.floor(r() * acc.cat.topics.length)];
        after.topicIds = before.topicIds.filter((t) => t !== topicId);
        if (!before.optOuts.some((o) => o.topicId === topicId)) after.optOuts = [...before.optOuts, { topicId, at: now, source: 'footer' }];
      } else if (what < 0.75) after.status = before.status === 'ACTIVE' ? 'UNSUBSCRIBED' : 'ACTIVE';
      else after.fields = randomFields(r, acc.cat);
      if (r() < 0.3) after.tags = pick(r, acc.cat.tags, 1 + Math.floor(r() * 3));
      const diff = diffSubscriber(before, after);
      if (!diff.changed) continue;
      out.push(...changeEvents(acc.id, before, after, diff, { catalog: acc.cat }, now));
      acc.subs[i] = after;
    }
    if (round === 0) {
      for (const acc of accounts) {
        out.push(tagEvent('deleted', acc.id, { id: acc.cat.tags[0], name: 'first', createdAt: now }, now, { removedFromSubscribers: 0 }));
        out.push(topicEvent('created', acc.id, { id: `${acc.id}-topic-new`, label: 'New', description: null, active: true, isDefault: false, createdAt: now }, now, { enrolledExistingSubscribers: true, enrolledCount: 0 }));
      }
    }
  }
  return out;
}

async function publishBacklog(url, events) {
  const nc = await connect({ servers: url, ...operatorAuth });
  await ensureStreams(nc);
  const js = nc.jetstream();
  const codec = JSONCodec();
  let next = 0;
  const worker = async () => {
    while (next < events.length) {
      const e = events[next++];
      await js.publish(e.subject, codec.encode(e.payload));
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info('DOMAIN');
  await nc.close();
  return { lastSeq: info.state.last_seq, bytes: info.state.bytes };
}

// ------------------------------------------------------------------ measurements

/** A bare nats.js pull consumer on the same stream and filter that only acks. Events/s. */
async function rawConsume(url, total, run) {
  const nc = await connect({ servers: url, ...operatorAuth });
  const jsm = await nc.jetstreamManager();
  const durable = `bench-raw-${run}`;
  await jsm.consumers.add('DOMAIN', { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: 'domain.>' });
  const consumer = await nc.jetstream().consumers.get('DOMAIN', durable);
  const started = Date.now();
  let seen = 0;
  // Bounded pulls of up to 1,000 messages, one after the other.
  while (seen < total) {
    const batch = await consumer.fetch({ max_messages: Math.min(1000, total - seen), expires: 5000 });
    for await (const m of batch) {
      m.ack();
      seen++;
    }
  }
  await nc.flush();
  const seconds = (Date.now() - started) / 1000;
  await jsm.consumers.delete('DOMAIN', durable);
  await nc.close();
  return Math.round(total / seconds);
}

async function appliedSequence(metricsPort) {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const text = await res.text();
  const m = text.match(/^segment_projection_applied_sequence(?:\{[^}]*\})? (\d+)/m);
  return m ? Number(m[1]) : 0;
}

/** A fresh segment process (empty data dir, new durable): seconds until the watermark reaches lastSeq. */
async function segmentCatchUp(url, lastSeq, run) {
  const spawned = Date.now();
  const svc = await startService('segment', { NATS_URL: url, SEGMENT_PROJECTION_DURABLE: `bench-projection-${run}`, LOG_LEVEL: 'info' });
  const ready = Date.now();
  try {
    const metricsPort = svc.ready.metricsPort;
    let applied = 0;
    while (applied < lastSeq) {
      if (Date.now() - ready > 600_000) throw new Error(`projection stuck at ${applied} of ${lastSeq}`);
      await new Promise((r) => setTimeout(r, 20));
      applied = await appliedSequence(metricsPort);
    }
    const done = Date.now();
    const { rss, peak } = require('./lib').rssMb(svc.pid);
    return { fromReady: (done - ready) / 1000, fromSpawn: (done - spawned) / 1000, rss, peak };
  } finally {
    const code = await svc.stop();
    if (code !== 0) console.error(`segment exited with ${code}:\n${svc.output().slice(-3000)}`);
    fs.rmSync(svc.dataDir, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const nats = await startNatsServer();
  try {
    const events = buildBacklog();
    const t = Date.now();
    const { lastSeq, bytes } = await publishBacklog(nats.url, events);
    const subscribers = accountCount * perAccount;
    console.log(`backlog: ${lastSeq} DOMAIN events (${(bytes / 1e6).toFixed(0)} MB) for ${subscribers} subscribers over ${accountCount} accounts, published in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const rows = [];
    for (let run = 0; run < runs; run++) {
      const raw = await rawConsume(nats.url, lastSeq, run);
      const seg = await segmentCatchUp(nats.url, lastSeq, run);
      const rate = Math.round(lastSeq / seg.fromReady);
      rows.push({ raw, rate, rateSpawn: Math.round(lastSeq / seg.fromSpawn), ...seg });
      console.log(`run ${run + 1}: projection ${rate} events/s (${seg.fromReady.toFixed(2)} s from ready, ${seg.fromSpawn.toFixed(2)} s from spawn), raw ack-only ${raw} events/s, segment RSS peak ${seg.peak} MB`);
    }
    const rate = median(rows.map((r) => r.rate));
    const raw = median(rows.map((r) => r.raw));
    const ratio = rate / raw;
    console.log(`\nbench/projection: ${lastSeq} DOMAIN events, fresh segment service (embedded store), ${runs} runs, medians`);
    console.table({
      'segment projection catch-up (from ready)': { 'events/s': rate },
      'segment projection catch-up (from spawn)': { 'events/s': median(rows.map((r) => r.rateSpawn)) },
      'bare nats.js pull consumer, ack only': { 'events/s': raw },
    });
    console.log(`applied events/s: ${rate} (target >= 10,000: ${verdict(rate >= 10_000)})`);
    console.log(`ratio projection/raw: ${ratio.toFixed(3)}`);
  } finally {
    await nats.stop();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
module.exports = { buildBacklog, publishBacklog };
