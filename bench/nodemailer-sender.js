#!/usr/bin/env node
// The mail benchmarks' baseline, as its own process (forked; bench/lib.js startNodemailerSender): one
// pooled nodemailer transport (the very nodemailer the messaging service runs) sending pre-rendered
// mails as fast as it can, `concurrency` sends outstanding. It stands where the delivery worker stands:
// its own process, the SMTP sink in another.
// IPC: sends {ready: true}; answers {id, cmd: 'send', url, n, pool, concurrency, mail, prefix} with
// {id, ms, cpuUs} (wall time and this process's CPU for the n mails).
//   mail 'receipt'    a short transactional mail (bench/email-delivery.js seeds the same)
//   mail 'newsletter' an RSS issue's mail with List-Unsubscribe headers (bench/rss.js)
'use strict';
const crypto = require('node:crypto');
const path = require('node:path');
const nodemailer = require(require.resolve('nodemailer', { paths: [path.join(__dirname, '..', 'services', 'messaging')] }));

const NEWSLETTER_HTML = `<p>Hi reader</p>${'<p><a href="https://blog.example/post">A post of the feed</a> with its summary text.</p>'.repeat(5)}`;

const mails = {
  receipt: (i, to) => ({
    from: { name: 'Shop', address: 'shop@example.com' },
    to,
    subject: `Receipt ${i}`,
    html: `<p>Receipt ${i}</p>`,
    text: `Receipt ${i}`,
  }),
  newsletter: (i, to) => ({
    from: { name: 'Blog', address: 'blog@example.com' },
    to,
    subject: `New posts ${i}`,
    html: NEWSLETTER_HTML,
    text: 'Hi reader',
    headers: { 'List-Unsubscribe': '<https://mail.example/u/token>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  }),
};

async function send({ url, n, pool, concurrency, mail, prefix }) {
  const transport = nodemailer.createTransport({ url, pool: true, maxConnections: pool, maxMessages: Infinity });
  const cpu = process.cpuUsage();
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const to = `${prefix}${i}@example.org`;
      await transport.sendMail({
        ...mails[mail](i, to),
        messageId: `<${crypto.randomUUID()}@example.com>`,
        envelope: { from: 'bounce@bounces.localhost', to: [to] },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = Date.now() - started;
  const used = process.cpuUsage(cpu);
  transport.close();
  return { ms, cpuUs: used.user + used.system };
}

process.on('message', (msg) => {
  send(msg).then(
    (result) => process.send({ id: msg.id, ...result }),
    (err) => process.send({ id: msg.id, error: String(err && err.stack ? err.stack : err) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
