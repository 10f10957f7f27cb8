#!/usr/bin/env node
// bench/subscribers: the subscriber domain at volume, through gateway + gRPC + subscriber service +
// embedded store, with every domain event published to JetStream on the way.
//
// (1) sync: --count subscribers (default 100,000), 5 custom field values (text, number, date,
//     single choice, boolean) and 2 tags each, in 1,000-row POST /subscribers/sync requests,
//     --parallel (default 4) in flight -> subscribers/s, printed beside the embedded store's raw
//     insertMany rate for the same subscriber documents (1,000-document batches, in this process,
//     same run) and the ratio. Target (issue 3): >= 5,000 subscribers/s.
// (2) list: --requests (default 2,000) GET /subscribers?pageSize=50 with a random status filter (or
//     none) and a random page of it, one at a time -> p50 / p99. Target: p99 < 50 ms at 100,000.
// (3) --memory: sync --count (default 1,000,000 in this mode) and print the service's RSS
//     (/proc/<pid>/status VmRSS, VmHWM) every 100,000. Target: < 1 GiB.
// --grpc drives the subscriber service's SyncSubscribers / ListSubscribers directly (no gateway);
// --service-node-options="--max-old-space-size=800" passes NODE_OPTIONS to the service only.
// Usage: npm run build && node bench/subscribers.js [--count 100000] [--memory] [--grpc] [--parallel 4] [--requests 2000]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('node:util');
const { startNatsServer, startService, startGateway, serviceAddresses } = require('@mailer/testing');
const { createClient } = require('@mailer/kit');
const { subscriberV1 } = require('@mailer/proto');
const { openStore } = require('@mailer/store');
const { subscriberSchema, toDoc } = require('../services/subscriber/dist/store/subscribers');
const { rssMb, verdict, benchAccount } = require('./lib');

const { values: args } = parseArgs({
  options: {
    count: { type: 'string' },
    memory: { type: 'boolean', default: false },
    grpc: { type: 'boolean', default: false },
    parallel: { type: 'string', default: '4' },
    requests: { type: 'string', default: '2000' },
    'service-node-options': { type: 'string', default: '--max-old-space-size=768' }, // as the local runner runs it
  },
});
const count = Number(args.count ?? (args.memory ? 1_000_000 : 100_000));
const parallel = Number(args.parallel);
const listRequests = Number(args.requests);
const ROWS = 1000;
const STATUSES = ['ACTIVE', 'UNSUBSCRIBED', 'BLOCKED', 'UNCONFIRMED'];
/** 85% ACTIVE, 5% each of the others: status filters select pages of very different sizes. */
const statusOf = (i) => (i % 20 < 17 ? 'ACTIVE' : STATUSES[(i % 20) - 16]);

/** The account's catalog in the API's terms, plus the JSON of row i. */
function rowFactory(catalog) {
  const { text, number, date, choice, bool, tags } = catalog;
  return (i) => ({
    email: `user${i}@example.org`,
    firstName: `User ${i}`,
    subscriberStatus: statusOf(i),
    tags,
    fields: [
      { fieldId: text, value: { kind: 'TEXT', text: `Company ${i % 1000}` } },
      { fieldId: number, value: { kind: 'NUMBER', number: i % 90 } },
      { fieldId: date, value: { kind: 'DATE', date: `19${String(50 + (i % 50)).padStart(2, '0')}-0${1 + (i % 9)}-1${i % 10}` } },
      { fieldId: choice.field, value: { kind: 'SINGLE_OPTION', optionId: choice.options[i % choice.options.length] } },
      { fieldId: bool, value: { kind: 'BOOLEAN', booleanValue: i % 2 === 0 } },
    ],
  });
}

/** The HTTP face: the gateway with an API key whose account has its rate limits raised. */
async function httpApi(gw) {
  const { accountId, call } = await benchAccount(gw, 'bench-subscribers');
  return {
    accountId,
    async setup() {
      const field = (label, fieldType, options) => call('POST', '/fields', { label, fieldType, required: false, internal: false, ...(options ? { options } : {}) });
      const text = await field('Company', 'TEXT');
      const number = await field('Age', 'NUMBER');
      const date = await field('Birthday', 'DATE');
      const choice = await field('Plan', 'SINGLE_CHOICE', ['Free', 'Pro', 'Team']);
      const bool = await field('Consent', 'BOOLEAN');
      const tags = [(await call('POST', '/tags', { name: 'bench-1' })).id, (await call('POST', '/tags', { name: 'bench-2' })).id];
      return { text: text.fieldId, number: number.fieldId, date: date.fieldId, choice: { field: choice.fieldId, options: choice.options.map((o) => o.id) }, bool: bool.fieldId, tags };
    },
    async sync(rows) {
      return (await call('POST', '/subscribers/sync', { subscribers: rows, mode: 'UPSERT' })).results.map((r) => r.outcome);
    },
    async list(status, pageNumber) {
      return call('GET', `/subscribers?pageSize=50&pageNumber=${pageNumber}${status ? `&status=${status}` : ''}`);
    },
  };
}

/** The gRPC face (--grpc): the same operations straight to the subscriber service. */
function grpcApi(address) {
  const P = subscriberV1;
  const client = createClient(P.SubscriberServiceClient, address, 60_000);
  const accountId = randomUUID();
  const statusEnum = (s) => P.SubscriberStatus[`SUBSCRIBER_STATUS_${s}`];
  const value = (v) => {
    switch (v.kind) {
      case 'TEXT':
        return { value: { $case: 'text', value: v.text }, labels: [] };
      case 'NUMBER':
        return { value: { $case: 'number', value: v.number }, labels: [] };
      case 'DATE':
        return { value: { $case: 'date', value: v.date }, labels: [] };
      case 'BOOLEAN':
        return { value: { $case: 'booleanValue', value: v.booleanValue }, labels: [] };
      default:
        return { value: { $case: 'optionId', value: v.optionId }, labels: [] };
    }
  };
  const outcome = (o) => P.SyncOutcome[o].replace('SYNC_OUTCOME_', '');
  return {
    accountId,
    close: () => client.close(),
    async setup() {
      const field = async (label, type, options = []) => (await client.addField({ accountId, label, fieldType: P.FieldType[`FIELD_TYPE_${type}`], required: false, internal: false, options })).field;
      const id = (f) => f.ref.ref.value;
      const choice = await field('Plan', 'SINGLE_CHOICE', ['Free', 'Pro', 'Team']);
      return {
        text: id(await field('Company', 'TEXT')),
        number: id(await field('Age', 'NUMBER')),
        date: id(await field('Birthday', 'DATE')),
        choice: { field: id(choice), options: choice.options.map((o) => o.id) },
        bool: id(await field('Consent', 'BOOLEAN')),
        tags: [(await client.addTag({ accountId, name: 'bench-1' })).tag.id, (await client.addTag({ accountId, name: 'bench-2' })).tag.id],
      };
    },
    async sync(rows) {
      const subscribers = rows.map((r) => ({
        accountId: '',
        email: r.email,
        firstName: r.firstName,
        subscriberStatus: statusEnum(r.subscriberStatus),
        tags: r.tags,
        topicIds: [],
        topicIdsGiven: false,
        fields: r.fields.map((f) => ({ fieldId: f.fieldId, value: value(f.value) })),
      }));
      return (await client.syncSubscribers({ accountId, subscribers, mode: P.SyncMode.SYNC_MODE_UPSERT })).results.map((r) => outcome(r.outcome));
    },
    async list(status, pageNumber) {
      const r = await client.listSubscribers({ accountId, pageNumber, pageSize: 50, status: status ? statusEnum(status) : 0 });
      const n = (s) => Number(s);
      const c = r.statusCounts;
      return { totalItems: n(r.totalItems), statusCounts: { UNCONFIRMED: n(c.unconfirmed), ACTIVE: n(c.active), UNSUBSCRIBED: n(c.unsubscribed), BLOCKED: n(c.blocked) } };
    },
  };
}

/** Syncs `total` rows in 1,000-row requests, `parallel` in flight; calls onProgress after each 100,000. */
async function syncAll(api, row, total, onProgress) {
  let next = 0;
  let done = 0;
  let failed = 0;
  async function worker() {
    while (next < total) {
      const start = next;
      next += ROWS;
      const rows = [];
      for (let i = start; i < Math.min(total, start + ROWS); i++) rows.push(row(i));
      const outcomes = await api.sync(rows);
      failed += outcomes.filter((o) => o !== 'CREATED').length;
      const before = done;
      done += rows.length;
      if (Math.floor(done / 100_000) > Math.floor(before / 100_000)) onProgress?.(done);
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker));
  if (failed) throw new Error(`${failed} rows were not CREATED`);
}

/** The embedded store's own insertMany rate for the same subscriber documents, in this process. */
async function rawInsertRate(row, total) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-store-'));
  const store = await openStore({ dataDir: dir });
  const subscribers = store.collection('subscribers', subscriberSchema);
  const accountId = randomUUID();
  const now = new Date().toISOString();
  const doc = (i) => {
    const r = row(i);
    return toDoc(accountId, {
      id: randomUUID(),
      email: r.email,
      firstName: r.firstName,
      status: r.subscriberStatus,
      tags: r.tags,
      topicIds: [],
      optOuts: [],
      fields: Object.fromEntries(r.fields.map((f) => [f.fieldId, f.value.text ?? f.value.number ?? f.value.date ?? f.value.optionId ?? f.value.booleanValue])),
      registeredAt: now,
      version: 1,
    }, now);
  };
  const started = process.hrtime.bigint();
  for (let b = 0; b < total; b += ROWS) {
    const docs = [];
    for (let i = b; i < Math.min(total, b + ROWS); i++) docs.push(doc(i));
    await subscribers.insertMany(docs);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return Math.round(total / seconds);
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    // --service-node-options "--max-old-space-size=800": V8 flags for the subscriber process only
    const subscriber = await startService('subscriber', { NATS_URL: nats.url, ...(args['service-node-options'] ? { NODE_OPTIONS: args['service-node-options'] } : {}) });
    stops.push(() => subscriber.stop());
    let api;
    if (args.grpc) {
      api = grpcApi(subscriber.address);
      stops.push(async () => api.close());
    } else {
      const gw = await startGateway({ NATS_URL: nats.url, ...serviceAddresses([subscriber]) });
      stops.push(() => gw.stop());
      api = await httpApi(gw);
    }
    const via = args.grpc ? 'gRPC SyncSubscribers (no gateway)' : 'POST /subscribers/sync through the gateway';
    const row = rowFactory(await api.setup());

    if (args.memory) {
      console.log(`\nbench/subscribers --memory: ${count.toLocaleString('en')} subscribers via ${via}, ${parallel} requests in flight`);
      const started = Date.now();
      let peak = 0;
      await syncAll(api, row, count, (done) => {
        const m = rssMb(subscriber.pid);
        peak = Math.max(peak, m.peak);
        console.log(`  ${done.toLocaleString('en').padStart(9)} subscribers: RSS ${m.rss} MB, peak ${m.peak} MB, ${Math.round(done / ((Date.now() - started) / 1000))} subscribers/s so far`);
      });
      const m = rssMb(subscriber.pid);
      console.log(`subscriber service RSS at ${count.toLocaleString('en')}: ${m.rss} MB, peak ${Math.max(peak, m.peak)} MB (target < 1024 MB: ${verdict(Math.max(peak, m.peak) < 1024)})`);
      return;
    }

    console.log(`\nbench/subscribers: ${count.toLocaleString('en')} subscribers, 5 field values + 2 tags each, ${ROWS}-row requests via ${via}, ${parallel} in flight (one machine: load, gateway, service, NATS share the cores)`);
    const started = Date.now();
    await syncAll(api, row, count);
    const syncSeconds = (Date.now() - started) / 1000;
    const serviceRate = Math.round(count / syncSeconds);
    const raw = await rawInsertRate(row, count);
    console.table({
      'sync end to end': { 'subscribers/s': serviceRate, seconds: syncSeconds.toFixed(1) },
      'embedded store insertMany (same documents)': { 'subscribers/s': raw, seconds: (count / raw).toFixed(1) },
    });
    console.log(`ratio sync/raw store: ${(serviceRate / raw).toFixed(3)}`);
    console.log(`sync: ${serviceRate} subscribers/s (target >= 5,000: ${verdict(serviceRate >= 5000)}); service RSS ${rssMb(subscriber.pid).rss} MB`);

    // (2) pages of 50 with random status filters and random pages of each
    const counts = (await api.list(undefined, 1)).statusCounts;
    const filters = [undefined, ...STATUSES];
    const pagesOf = (status) => Math.max(1, Math.ceil((status ? counts[status] : Object.values(counts).reduce((a, b) => a + b, 0)) / 50));
    for (let i = 0; i < 50; i++) await api.list(filters[i % filters.length], 1 + Math.floor(Math.random() * pagesOf(filters[i % filters.length]))); // warm-up
    const latencies = [];
    for (let i = 0; i < listRequests; i++) {
      const status = filters[Math.floor(Math.random() * filters.length)];
      const t = process.hrtime.bigint();
      await api.list(status, 1 + Math.floor(Math.random() * pagesOf(status)));
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(`list: ${listRequests} x GET /subscribers?pageSize=50 (random status filter or none, random page): p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms (target p99 < 50 ms: ${verdict(p99 < 50)})`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
