#!/usr/bin/env node
// Calibration servers for the benchmarks. Each runs as its own process, as the gateway does, so a
// baseline never shares an event loop with the load tool (that would halve it and flatter ratios).
//   node <json>             bare node:http answering every request with <json>
//   express <json>          Express 5, one route, res.json(<json>): what the framework alone costs
//   grpc <json>             a trivial grpc-js server: one unary method answering <json>'s bytes (a
//                           stored record of the same size), as a service answers from memory
//   express-grpc <host:port> Express 5, one route, one unary grpc-js call to that server per request,
//                           res.json of the answer: the floor of "Express in front of gRPC"
//   express-events <nats>   Express 5, POST /events: express.json, one JetStream publish, 202 once
//                           acknowledged: the least any /events on this stack can do
//   express-email <nats>    Express 5, POST /email-messages: express.json, one render of a pre-parsed
//                           template (@mailer/templates), one acknowledged JetStream publish of the job, 202:
//                           the least any acceptance of a rendered mail on this stack can do
// Started with fork(); sends {port} over IPC once listening.
'use strict';
const http = require('node:http');
const { randomUUID } = require('node:crypto');

async function app(kind, arg) {
  if (kind === 'node') return (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(arg);
  const express = require('express');
  const server = express();
  if (kind === 'express') {
    const body = JSON.parse(arg);
    server.get('/{*path}', (_req, res) => res.json(body));
    return server;
  }
  if (kind === 'express-grpc') {
    const client = new (grpcRecords())(arg, require('@grpc/grpc-js').credentials.createInsecure());
    server.get('/{*path}', (req, res) => {
      client.get(Buffer.from(req.path), (err, bytes) => (err ? res.status(503).end() : res.json(JSON.parse(bytes))));
    });
    return server;
  }
  if (kind === 'express-events') {
    const { connect, JSONCodec } = require('nats');
    const nc = await connect({ servers: arg, user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD, noAsyncTraces: true });
    const js = nc.jetstream();
    const codec = JSONCodec();
    server.post('/events', express.json(), async (req, res) => {
      const eventId = randomUUID();
      await js.publish('events.baseline', codec.encode({ eventId, ...req.body }), { msgID: eventId });
      res.status(202).json({ eventId, duplicate: false });
    });
    return server;
  }
  if (kind === 'express-email') {
    const { connect, JSONCodec } = require('nats');
    // The platform's one template engine (same limits, escaping, CSS inlining and derived text).
    const { compileTemplate, renderTemplate } = require('@mailer/templates');
    const nc = await connect({ servers: arg, user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD, noAsyncTraces: true });
    const js = nc.jetstream();
    const codec = JSONCodec();
    const compiled = compileTemplate({
      subject: 'Your order {{ orderId }}',
      html: '<html><body><h1>Thanks, {{ subscriber.firstName | default: "friend" }}!</h1><p>Order {{ orderId }}: {{ total }}</p><a href="https://shop.example/orders/{{ orderId }}">See your order</a></body></html>',
    });
    server.post('/email-messages', express.json(), async (req, res) => {
      const messageId = randomUUID();
      const rendered = await renderTemplate(compiled, { substitutionData: req.body.substitutionData, subscriber: { email: req.body.email } });
      await js.publish('jobs.baseline', codec.encode({ messageId, ...rendered }), { msgID: messageId });
      res.status(202).json({ messageId, status: 'QUEUED' });
    });
    return server;
  }
  throw new Error(`unknown baseline ${kind}`);
}

/** A client class of the one-method service `bench.Records/Get` (raw bytes both ways: no schema work). */
function grpcRecords() {
  const bytes = { requestSerialize: (b) => b, requestDeserialize: (b) => b, responseSerialize: (b) => b, responseDeserialize: (b) => b };
  return require('@grpc/grpc-js').makeGenericClientConstructor({ get: { path: '/bench.Records/Get', requestStream: false, responseStream: false, ...bytes } }, 'Records');
}

function serveGrpc(json) {
  const grpc = require('@grpc/grpc-js');
  const server = new grpc.Server();
  const record = Buffer.from(json);
  server.addService(grpcRecords().service, { get: (_call, callback) => callback(null, record) });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send({ port });
  });
}

if (process.argv[2] === 'grpc') serveGrpc(process.argv[3]);
else app(process.argv[2], process.argv[3]).then((handler) => {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
});
