#!/usr/bin/env node
// `npm run internal-access`: writes charts/mailer/files/internal-access.json, who may do what inside
// the system as the Helm chart renders it (NATS users' permissions, network policies of gRPC calls),
// from each process's build: its src/nats-access.ts and GRPC_CALLS in @mailer/kit. Run it after
// changing either (the chart tests fail until the file matches the code).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const { internalAccess } = require(path.join(root, 'packages/testing/dist/internal-access'));
const file = path.join(root, 'charts/mailer/files/internal-access.json');
fs.writeFileSync(file, `${JSON.stringify(internalAccess(), null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
