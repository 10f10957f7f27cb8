// The reconciliation of a 5,000-reader broadcast adds up at every moment: read again and again while
// the audience is recorded page by page and the mail is delivered, both equations hold on every read
// (audience = recipients + sum(excluded); recipients = pending + sent + delivered + deferred + failed
// + bounced + suppressed). Then a kill -9 of the messaging service in the middle of a second send:
// every read before and after it still adds up, the send resumes at its last recorded page, and once
// nothing is pending any more (no email job waits on JetStream, nothing pending in the
// reconciliation) every recipient has exactly one mail at the relay.
import { addReaders, broadcastAccount, getBroadcast, sleep, startBroadcastStack, type BroadcastStack } from './support/broadcast-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(600_000);

const TOTAL = 5_000;
const UNSUBSCRIBED = 400; // NOT_ACTIVE
const SUPPRESSED = 100;
const RECIPIENTS = TOTAL - UNSUBSCRIBED - SUPPRESSED;

let s: BroadcastStack;
let a: Api;

beforeAll(async () => {
  // Pages of 250: the audience is recorded in 20 steps, each one transaction.
  s = await startBroadcastStack({ BROADCAST_SEND_PAGE_SIZE: '250' });
  ({ a } = await broadcastAccount(s.env, 'reconcile'));
  await addReaders(a, Array.from({ length: TOTAL }, (_, i) => ({ email: `r${String(i).padStart(4, '0')}@reconcile.test`, ...(i % 12 === 5 && i < 12 * UNSUBSCRIBED ? { subscriberStatus: 'UNSUBSCRIBED' } : {}) })));
  // Readers 5, 17, 29, ... are unsubscribed; readers 7, 19, 31, ... (the first 100) suppressed.
  for (let i = 7; i < 12 * SUPPRESSED; i += 12) expectStatus(await a.post('/suppressions', { email: `r${String(i).padStart(4, '0')}@reconcile.test` }), 201);
});
afterAll(async () => s?.stop());

/** Reads the broadcast over and over (each read checked against both equations) until it is SENT and every recipient's mail delivered. */
async function watchUntilDelivered(id: string, onRead: (b: any) => Promise<void> | void = () => undefined) { // eslint-disable-line @typescript-eslint/no-explicit-any
  const reads = { total: 0, midSend: 0 };
  for (const deadline = Date.now() + 300_000; ; await sleep(20)) {
    const b = await getBroadcast(a, id);
    reads.total++;
    const r = b.reconciliation;
    if (r.audience > 0 && (r.audience < TOTAL || r.pending > 0)) reads.midSend++;
    await onRead(b);
    if (b.status === 'SENT' && r.delivered === r.recipients) return { b, reads };
    if (Date.now() > deadline) throw new Error(`not delivered in time: ${JSON.stringify(b.reconciliation)}`);
  }
}

const final = {
  audience: TOTAL,
  excluded: { NOT_ACTIVE: UNSUBSCRIBED, NOT_IN_TOPIC: 0, OPTED_OUT: 0, NOT_IN_SEGMENT: 0, SEGMENT_UNKNOWN: 0, SUPPRESSED },
  recipients: RECIPIENTS, pending: 0, sent: 0, delivered: RECIPIENTS, deferred: 0, failed: 0, bounced: 0, suppressed: 0,
};

/** The relay's mail of one subject, per recipient address. */
function received(subject: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of s.relay.messages) if (m.subject === subject) counts.set(m.rcptTo[0], (counts.get(m.rcptTo[0]) ?? 0) + 1);
  return counts;
}

it('adds up on every read while 5,000 readers are recorded and their mail delivered', async () => {
  const b = expectStatus(await a.post('/broadcasts', { name: 'First', templateName: 'spring', subject: 'First' }), 201);
  expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, {}), 200);
  const { b: done, reads } = await watchUntilDelivered(b.id);
  expect(done.reconciliation).toEqual(final);
  // The reads saw the send in progress (not just before and after it).
  expect(reads.midSend).toBeGreaterThanOrEqual(5);
  await s.relay.waitFor(() => received('First').size === RECIPIENTS, 60_000);
  expect([...received('First').values()].every((n) => n === 1)).toBe(true);
});

it('adds up on every read through a kill -9 mid-send, and every recipient gets the mail exactly once', async () => {
  // The delivery worker pauses in this replica so that the kill lands in the recording of the
  // audience: a crash in the middle of an SMTP conversation may resend that one mail (the delivery
  // worker's documented at-most-one resend), which is not what this test is about.
  await s.env.restartMessaging({ env: { MAIL_SEND_PAUSED: 'true' } });
  const b = expectStatus(await a.post('/broadcasts', { name: 'Second', templateName: 'spring', subject: 'Second' }), 201);
  expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, {}), 200);
  let before;
  for (const deadline = Date.now() + 120_000; ; await sleep(10)) {
    before = await getBroadcast(a, b.id);
    if (before.reconciliation.audience >= 1_000) break;
    if (Date.now() > deadline) throw new Error('the send never got going');
  }
  await s.env.restartMessaging({ kill9: true, env: { MAIL_SEND_PAUSED: 'false' } });
  const after = await getBroadcast(a, b.id);
  expect(after.reconciliation.audience).toBeGreaterThanOrEqual(before.reconciliation.audience);
  expect(after.reconciliation.audience).toBeLessThan(TOTAL); // killed mid-send
  const { b: done } = await watchUntilDelivered(b.id);
  expect(done.reconciliation).toEqual(final);

  // Barrier: nothing left to deliver, then count.
  const jsm = await s.env.stack.nc.jetstreamManager();
  for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
    const consumer = await jsm.consumers.info('JOBS', 'messaging-email-delivery');
    if (consumer.num_pending === 0 && consumer.num_ack_pending === 0) break;
    if (Date.now() > deadline) throw new Error(`email jobs still pending: ${consumer.num_pending} + ${consumer.num_ack_pending}`);
  }
  const second = received('Second');
  expect(second.size).toBe(RECIPIENTS);
  expect([...second.values()].filter((n) => n !== 1)).toEqual([]);
});
