#!/usr/bin/env node
// The benchmarks' SMTP sink, as its own process (forked; bench/lib.js startSink): it accepts every
// mail and only counts arrivals, so neither the system nor its baseline shares an event loop with it.
// IPC: sends {port} once listening; answers each request {id, cmd} with {id, ...}:
//   {cmd: 'until', n}  once n mails arrived since the last reset: {count, first, last} (arrival times, ms)
//   {cmd: 'stats'}     at once: {count, first, last, cpuUs} (this process's CPU since the last reset)
//   {cmd: 'reset'}     forgets the arrivals, restarts the CPU meter
'use strict';
const { SMTPServer } = require('smtp-server');

let count = 0;
let first = 0;
let last = 0;
let cpu = process.cpuUsage();
const waiting = [];

const stats = () => ({ count, first, last });
const server = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  maxClients: 1000,
  onData(stream, _session, callback) {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      last = Date.now();
      if (count++ === 0) first = last;
      for (let i = waiting.length - 1; i >= 0; i--) {
        if (count >= waiting[i].n) process.send({ id: waiting.splice(i, 1)[0].id, ...stats() });
      }
      callback(null, 'Ok');
    });
  },
});

process.on('message', ({ id, cmd, n }) => {
  if (cmd === 'reset') {
    count = first = last = 0;
    cpu = process.cpuUsage();
    process.send({ id });
  } else if (cmd === 'stats') {
    const used = process.cpuUsage(cpu);
    process.send({ id, ...stats(), cpuUs: used.user + used.system });
  } else if (cmd === 'until') {
    if (count >= n) process.send({ id, ...stats() });
    else waiting.push({ id, n });
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send({ port: server.server.address().port }));
