// A process that runs the delivery worker exactly as services/messaging/src/server.ts wires it (the
// built dist/ modules: consumer, use case, pooled transport, outbox relay) over its own embedded store
// in DATA_DIR, for bench/email-delivery.js, which measures the worker alone (the tests send through the
// messaging service itself). With SEED_COUNT it first stores that many QUEUED messages of SEED_ACCOUNT
// and publishes their jobs, as the accepting use case leaves them (once: a restart finds them stored);
// it prints the "ready" line spawnReady waits for.
const crypto = require('node:crypto');
const { openStore } = require('@mailer/store');
const { natsConnection } = require('@mailer/kit');
const { connectNats, ensureStreams, publish, startOutboxRelay } = require('@mailer/nats');
const { job } = require('@mailer/nats/facts');
const { loadMessagingConfig } = require('../../dist/config');
const { bounceDeps } = require('../../dist/readers/app/bounces');
const { publicLinks } = require('../../dist/readers/app/public-links');
const { domainPolicy } = require('../../dist/templates/app/sending-domains');
const { smtpTransport } = require('../../dist/clients/smtp-transport');
const { AccountSendRate } = require('../../dist/mail/domain/send-rate');
const { startEmailJobs } = require('../../dist/mail/events/email-jobs');
const { messageCollections, messagesOf } = require('../../dist/mail/store/messages');
const { outboxRepository } = require('@mailer/nats');
const { suppressionCollection } = require('../../dist/readers/store/suppressions');

async function main() {
  const config = loadMessagingConfig(process.env);
  const store = await openStore({ dataDir: config.DATA_DIR });
  // As the messaging service's NATS user (NATS_USER / NATS_PASSWORD from the test): its permissions.
  const nc = await connectNats({ ...natsConnection(config), name: 'messaging' });
  await ensureStreams(nc);
  const js = nc.jetstream();
  const messages = messageCollections(store);
  const seedCount = Number(process.env.SEED_COUNT ?? 0);
  const accountId = process.env.SEED_ACCOUNT;
  if (seedCount > 0 && (await messages.messages.countDocuments({ accountId })) === 0) {
    const repo = messagesOf(messages, accountId);
    for (let i = 0; i < seedCount; i++) {
      const now = new Date();
      const messageId = crypto.randomUUID();
      await repo.insert(
        {
          _id: messageId, kind: 'TRANSACTIONAL', templateName: 'receipt', email: `crash${i}@example.org`, subscriberId: null, topicId: null,
          senderProfileId: 'p1', fromEmail: 'shop@example.com', fromName: 'Shop', replyTo: null, subject: `Receipt ${i}`, links: [],
          tracking: { opens: false, clicks: false }, status: 'QUEUED', suppressionReason: null, history: [{ status: 'QUEUED', at: now }],
          attempts: [], nextAttemptAt: null, createdAt: now, sentAt: null, deliveredAt: null, bouncedAt: null, complainedAt: null,
          bounce: null, openCount: 0, firstOpenedAt: null, machineOpenCount: 0, clickCount: 0, firstClickedAt: null, machineClickCount: 0,
          eventProperties: null,
        },
        { html: `<p>Receipt ${i}</p>`, text: `Receipt ${i}`, headers: {} },
      );
      const j = job('email', { accountId, messageId });
      await publish(js, j.subject, j.payload, { msgID: messageId });
    }
  }
  const relay = startOutboxRelay({ store, js, retainPublishedMs: 0 });
  const transport = smtpTransport(config);
  const log = { warn: (o, m) => console.error(JSON.stringify({ level: 'warn', msg: m, ...o })), error: (o, m) => console.error(JSON.stringify({ level: 'error', msg: m, ...o })) };
  const newId = () => crypto.randomUUID();
  const now = () => new Date();
  const consumer = startEmailJobs({
    nc,
    concurrency: config.MAIL_SEND_CONCURRENCY,
    logger: log,
    deps: {
      store, messages, suppressions: suppressionCollection(store), outbox: outboxRepository(store), transport, links: publicLinks(config),
      domains: domainPolicy({ store, verification: config.MAIL_DOMAIN_VERIFICATION, keys: null, operatorKeys: config.DKIM_KEYS }),
      sendRate: new AccountSendRate(config.MAIL_ACCOUNT_RATE_PER_SECOND), settings: config, now, newId,
      notifyOutbox: relay.notify, log, bounces: bounceDeps({ store, notifyOutbox: relay.notify, now, newId }),
    },
  });
  // Benchmarks: the store's commits and document writes so far, on demand.
  process.on('SIGUSR2', () => console.log(JSON.stringify({ msg: 'store stats', ...store.stats() })));
  process.once('SIGTERM', async () => {
    await consumer.stop();
    transport.close();
    await relay.stop();
    await nc.drain();
    await store.close();
    process.exit(0);
  });
  console.log(JSON.stringify({ level: 30, msg: 'ready' }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
