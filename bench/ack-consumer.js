#!/usr/bin/env node
// The events benchmark's baseline, as its own process (forked; bench/lib.js forkChild): a bare nats.js
// pull consumer that only acknowledges, what any consumer of a stream costs at least.
// IPC: sends {ready: true}; answers {id, natsUrl, stream, filter, startSeq, count} with {id, ms, cpuUs}:
// a new durable consumer from stream sequence `startSeq` takes `count` messages (pulls of up to
// 1,000, each acknowledged), then is deleted. Connects as NATS_USER / NATS_PASSWORD.
'use strict';
const { connect, AckPolicy, DeliverPolicy } = require('nats');

async function consume({ natsUrl, stream, filter, startSeq, count }) {
  const nc = await connect({ servers: natsUrl, user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD, noAsyncTraces: true });
  try {
    const jsm = await nc.jetstreamManager();
    const durable = `bench-ack-${process.pid}-${startSeq}`;
    await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq, filter_subject: filter });
    const consumer = await nc.jetstream().consumers.get(stream, durable);
    const cpu = process.cpuUsage();
    const started = Date.now();
    let seen = 0;
    while (seen < count) {
      const batch = await consumer.fetch({ max_messages: Math.min(1000, count - seen), expires: 5000 });
      for await (const m of batch) {
        m.ack();
        seen++;
      }
    }
    await nc.flush();
    const ms = Date.now() - started;
    const used = process.cpuUsage(cpu);
    await jsm.consumers.delete(stream, durable);
    return { ms, cpuUs: used.user + used.system };
  } finally {
    await nc.close();
  }
}

process.on('message', (msg) => {
  consume(msg).then(
    (result) => process.send({ id: msg.id, ...result }),
    (err) => process.send({ id: msg.id, error: String(err && err.stack ? err.stack : err) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
