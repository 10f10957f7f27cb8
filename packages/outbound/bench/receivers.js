#!/usr/bin/env node
// Receivers for packages/outbound/bench/outbound.js: N HTTP servers on 127.0.0.1 in ONE process of their own
// (so the client measured does not share their event loop). Each answers 204
// at once and counts arrivals, except the "timing out" ones, which hold every request for holdMs (above
// the 15 s delivery timeout) and answer nothing in time. One delivery in `verifyEvery` is checked
// against the Standard Webhooks signature (HMAC-SHA256 over id.timestamp.body with the whsec_ secret):
// proof that what arrives is signed, at a cost that does not make the receivers what is measured.
// Started with fork(); sends {ports} once listening; answers {cmd: "stats"} with {stats}, {cmd: "reset"} with {reset}.
'use strict';
const crypto = require('node:crypto');
const http = require('node:http');

const config = JSON.parse(process.argv[2] || '{}');
const count = config.count ?? 10;
const timingOut = new Set(config.timingOut ?? []);
const holdMs = config.holdMs ?? 20_000;
const verifyEvery = config.verifyEvery ?? 100;
const key = config.secret ? Buffer.from(config.secret.replace(/^whsec_/, ''), 'base64') : null;

const stats = Array.from({ length: count }, () => ({ count: 0, first: 0, last: 0, held: 0, badSignatures: 0, verified: 0 }));
const held = new Set();

const signatureOk = (headers, body) => {
  const expected = crypto.createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.`).update(body).digest();
  // 'v1,<sig> v1,<sig2>' during a rotation: any one matching is enough
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .map((s) => Buffer.from(s.replace(/^v1,/, ''), 'base64'))
    .some((sig) => sig.length === expected.length && crypto.timingSafeEqual(sig, expected));
};

const servers = stats.map((s, index) =>
  http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (timingOut.has(index)) {
        s.held++;
        const t = setTimeout(() => {
          held.delete(t);
          res.writeHead(204).end();
        }, holdMs);
        held.add(t);
        return;
      }
      const now = Date.now();
      if (s.count === 0) s.first = now;
      s.last = now;
      s.count++;
      if (key && s.count % verifyEvery === 1) {
        if (signatureOk(req.headers, Buffer.concat(chunks))) s.verified++;
        else s.badSignatures++;
      }
      res.writeHead(204).end();
    });
  }),
);
for (const server of servers) server.keepAliveTimeout = 30_000;

Promise.all(servers.map((server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port))))).then((ports) =>
  process.send({ ports }),
);

process.on('message', (msg) => {
  if (msg.cmd === 'stats') process.send({ stats });
  if (msg.cmd === 'reset') {
    for (const s of stats) Object.assign(s, { count: 0, first: 0, last: 0, held: 0, badSignatures: 0, verified: 0 });
    process.send({ reset: true });
  }
});
process.on('disconnect', () => {
  for (const t of held) clearTimeout(t);
  process.exit(0);
});
