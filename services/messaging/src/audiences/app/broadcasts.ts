// Broadcast use cases (docs/integrators.md "Broadcasts and batch sending"): create, read, change and delete while
// DRAFT or SCHEDULED, schedule, cancel, test sends, the recipient list and the resend to non-openers.
// The send itself is app/broadcast-send.ts (the send poller).
//
// Decisions (published in the OpenAPI document):
// - Scheduling is only from DRAFT (`409 broadcast_not_draft`); the ids the broadcast names are
//   checked again then, and the sender must be able to send (`409 sender_profile_required`,
//   `sender_domain_not_verified`). `sendAt` absent or not in the future sends now; at most a year ahead.
// - A broadcast is only ever sent once: FAILED and CANCELLED are final (create a new one, or resend).
// - A test send (1..5 addresses) renders the first variant for each address as the readers get it
//   (`subscriber` values when the address is a subscriber of the account), subject prefixed
//   "[Test] "; a suppressed or BLOCKED address gets a SUPPRESSED message, as any send would.
// - A resend to non-openers copies template, sender, segment, topic and send window; its subject is
//   the one given, else the original's (an A/B test's winner), else the template's.
import { failedPrecondition, invalid, notFound, type Problem } from '@mailer/kit';
import { job } from '@mailer/nats/facts';
import { broadcastValues, MAX_NAME, type BroadcastInput, type BroadcastRequest, type BroadcastStatus, type ReaderStatus } from '../domain/broadcast';
import { canonicalAddress } from '../../templates/domain/sender-profile';
import { recipientsOf, type BroadcastTally } from '../store/broadcast-recipients';
import { EDITABLE, type BroadcastDoc } from '../store/broadcasts';
import { emailTemplatesOf } from '../../templates/store/email-templates';
import { messagesOf } from '../../mail/store/messages';
import { senderProfilesOf } from '../../templates/store/sender-profiles';
import { suppressionsOf } from '../../readers/store/suppressions';
import { composeBroadcastMail, contentOf } from './broadcast-mail';
import type { BroadcastDeps } from './broadcast-ports';
import { beginSending } from './broadcast-send';
import { templateNotFound } from '../../templates/app/email-templates';
import { senderProfileNotFound } from '../../templates/app/sender-profiles';

export const broadcastNotFound = (id: string) => notFound('broadcast_not_found', `no broadcast with id ${id} exists in the account`);
const MAX_TEST_EMAILS = 5;
const MAX_AHEAD_MS = 366 * 24 * 3600_000;

async function broadcastOf(deps: BroadcastDeps, accountId: string, id: string): Promise<BroadcastDoc> {
  const b = await deps.broadcasts.get(accountId, id.toLowerCase());
  if (!b) throw broadcastNotFound(id);
  return b;
}

/** The ids the broadcast names must exist in the account (404 with their errorIds); a send window's field must be a TEXT field. */
async function checkReferences(deps: BroadcastDeps, accountId: string, input: BroadcastInput): Promise<void> {
  const [template, profile, segment, topics, fields] = await Promise.all([
    emailTemplatesOf(deps.store, accountId).get(input.templateName),
    input.senderProfileId ? senderProfilesOf(deps.store, accountId).get(input.senderProfileId) : null,
    input.segmentId ? deps.catalog.segmentExists(accountId, input.segmentId) : true,
    input.topicId ? deps.catalog.topicIds(accountId) : null,
    input.sendWindow?.timeZoneField ? deps.catalog.customFields(accountId) : null,
  ]);
  if (!template) throw templateNotFound(input.templateName);
  if (input.senderProfileId && !profile) throw senderProfileNotFound(input.senderProfileId);
  if (!segment) throw notFound('segment_not_found', `no segment with id ${input.segmentId} exists in the account`);
  if (topics && !topics.has(input.topicId!)) throw notFound('topic_not_found', `no topic with id ${input.topicId} exists in the account`);
  const zoneField = input.sendWindow?.timeZoneField;
  if (fields && !fields.some((f) => f.personalizationTagName === zoneField && f.active && (f.type === 'TEXT' || f.type === 'LONG_TEXT'))) {
    throw invalid('validation_failed', `sendWindow.timeZoneField: the account has no active TEXT field with personalizationTagName "${zoneField}"`, [
      { path: 'body.sendWindow.timeZoneField', problem: 'no active TEXT field with this personalizationTagName' },
    ]);
  }
}

export async function createBroadcast(deps: BroadcastDeps, accountId: string, req: BroadcastRequest): Promise<BroadcastDoc> {
  const input = broadcastValues(req);
  await checkReferences(deps, accountId, input);
  const now = deps.now();
  return deps.broadcasts.insert(newBroadcast(deps, accountId, input, now, null));
}

function newBroadcast(deps: BroadcastDeps, accountId: string, input: BroadcastInput, now: Date, resendOf: string | null): BroadcastDoc {
  return {
    _id: deps.newId(), accountId, ...input, resendOf, status: 'DRAFT', sendAt: null, startedAt: null, finishedAt: null, lastError: null, createdAt: now, updatedAt: now,
    sendDueAt: null, leaseUntil: null, cursor: '', audienceDone: false, decideAt: null, winner: null, sendFailures: 0,
  };
}

export const getBroadcast = broadcastOf;

/** A broadcast as answered: with its reconciliation and variants, read from its tally. */
export interface BroadcastView {
  broadcast: BroadcastDoc;
  tally: BroadcastTally;
}

/** The answer for one broadcast a use case returned. */
export const broadcastView = async (deps: Pick<BroadcastDeps, 'recipients'>, broadcast: BroadcastDoc): Promise<BroadcastView> => ({
  broadcast,
  tally: await recipientsOf(deps.recipients, broadcast.accountId).reconciliation(broadcast._id),
});

/** A page of the account's broadcasts with their tallies (one query for the page's tallies). */
export async function listBroadcasts(deps: BroadcastDeps, accountId: string, q: { status?: BroadcastStatus; pageNumber: number; pageSize: number }): Promise<{ items: BroadcastView[]; total: number }> {
  const { items, total } = await deps.broadcasts.page(accountId, q.status, q.pageNumber, q.pageSize);
  const tallies = await recipientsOf(deps.recipients, accountId).reconciliations(items.map((b) => b._id));
  return { items: items.map((broadcast) => ({ broadcast, tally: tallies.get(broadcast._id)! })), total };
}

const notEditable = (b: BroadcastDoc) => failedPrecondition('broadcast_not_editable', `the broadcast is ${b.status}: only a DRAFT or SCHEDULED broadcast can be changed or deleted`);

export async function updateBroadcast(deps: BroadcastDeps, accountId: string, id: string, req: BroadcastRequest): Promise<BroadcastDoc> {
  const b = await broadcastOf(deps, accountId, id);
  if (!EDITABLE.includes(b.status)) throw notEditable(b);
  const input = broadcastValues(req);
  await checkReferences(deps, accountId, input);
  const updated = await deps.broadcasts.transition(accountId, b._id, EDITABLE, { ...input, updatedAt: deps.now() });
  if (!updated) throw notEditable(await broadcastOf(deps, accountId, id));
  return updated;
}

export async function deleteBroadcast(deps: BroadcastDeps, accountId: string, id: string): Promise<void> {
  const b = await broadcastOf(deps, accountId, id);
  if (!EDITABLE.includes(b.status) || !(await deps.broadcasts.remove(accountId, b._id))) throw notEditable(await broadcastOf(deps, accountId, id));
}

/** An Instant of the request: null when absent; `400 validation_failed` when not a time or more than a year ahead. */
function instantOf(deps: BroadcastDeps, value: string | undefined, path: string): Date | null {
  if (value === undefined || value === '') return null;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid('validation_failed', `${path} is not an ISO 8601 instant`, [{ path, problem: 'not an instant' }]);
  if (at.getTime() - deps.now().getTime() > MAX_AHEAD_MS) throw invalid('validation_failed', `${path} may be at most a year ahead`, [{ path, problem: 'more than a year ahead' }]);
  return at;
}

/** DRAFT -> SCHEDULED (sendAt in the future) or SENDING (now). */
export async function scheduleBroadcast(deps: BroadcastDeps, accountId: string, id: string, rawSendAt?: string): Promise<BroadcastDoc> {
  const sendAt = instantOf(deps, rawSendAt, 'body.sendAt');
  const b = await broadcastOf(deps, accountId, id);
  return scheduleDraft(deps, b, sendAt);
}

async function scheduleDraft(deps: BroadcastDeps, b: BroadcastDoc, sendAt: Date | null): Promise<BroadcastDoc> {
  const notDraft = (x: BroadcastDoc) => failedPrecondition('broadcast_not_draft', `the broadcast is ${x.status}: only a DRAFT broadcast can be scheduled`);
  if (b.status !== 'DRAFT') throw notDraft(b);
  await checkReferences(deps, b.accountId, b);
  await contentOf(deps, b); // the template compiles and the sender can send, now rather than at the first page
  const now = deps.now();
  const later = sendAt && sendAt > now ? sendAt : null;
  const scheduled = later
    ? await deps.broadcasts.transition(b.accountId, b._id, 'DRAFT', { status: 'SCHEDULED', sendAt: later, sendDueAt: later, updatedAt: now })
    : await beginSending(deps, b, 'DRAFT');
  if (!scheduled) throw notDraft(await broadcastOf(deps, b.accountId, b._id));
  deps.wakeSend(later ?? now);
  return scheduled;
}

/** SCHEDULED or SENDING -> CANCELLED: readers whose mail is not queued get nothing (the poller removes them); queued mail is still delivered. */
export async function cancelBroadcast(deps: BroadcastDeps, accountId: string, id: string): Promise<BroadcastDoc> {
  const b = await broadcastOf(deps, accountId, id);
  const now = deps.now();
  const cancelled = await deps.broadcasts.transition(accountId, b._id, ['SCHEDULED', 'SENDING'], { status: 'CANCELLED', finishedAt: now, sendDueAt: now, updatedAt: now });
  if (!cancelled) {
    const current = await broadcastOf(deps, accountId, id);
    throw failedPrecondition('broadcast_not_cancellable', `the broadcast is ${current.status}: only a SCHEDULED or SENDING broadcast can be cancelled`);
  }
  deps.wakeSend(now);
  return cancelled;
}

/** The first variant's mail to 1..5 addresses, subject prefixed "[Test] "; no reader of the audience, counted nowhere. */
export async function sendBroadcastTest(deps: BroadcastDeps, accountId: string, id: string, rawEmails: string[]): Promise<string[]> {
  if (rawEmails.length < 1 || rawEmails.length > MAX_TEST_EMAILS) throw invalid('validation_failed', `emails must hold 1 to ${MAX_TEST_EMAILS} addresses`, [{ path: 'body.emails', problem: `1..${MAX_TEST_EMAILS} addresses` }]);
  const problems: Problem[] = [];
  const emails = rawEmails.map((raw, i) => canonicalAddress(raw) ?? (problems.push({ path: `body.emails[${i}]`, problem: 'not a valid email address' }), ''));
  if (problems.length) throw invalid('invalid_email', 'every test address must be a valid email address', problems);
  const b = await broadcastOf(deps, accountId, id);
  const [content, recipients, suppressed] = await Promise.all([
    contentOf(deps, b, '[Test] '),
    Promise.all(emails.map((email) => deps.recipientLookup.recipientByEmail(accountId, email))),
    suppressionsOf(deps.suppressions, accountId).findMany(emails),
  ]);
  const composed = await Promise.all(emails.map((email, i) => composeBroadcastMail(deps, b, content, {
    email, recipient: recipients[i], variant: b.abTest ? 0 : null, test: true,
    suppressionReason: suppressed.get(email) ?? (recipients[i]?.status === 'BLOCKED' ? 'BLOCKED' : null),
  })));
  const queued = composed.filter((c) => c.message.status === 'QUEUED');
  await deps.store.transaction(async (tx) => {
    await messagesOf(deps.messages, accountId).insertMany(composed, tx);
    if (queued.length) await deps.outbox.record(tx, queued.map(({ message }) => job('email', { accountId, messageId: message._id })));
  });
  if (queued.length) {
    deps.notifyOutbox();
    await deps.awaitPublished();
  }
  return composed.map((c) => c.message._id);
}

/** Every reader of the audience, by subscriber id: recipients with their mail's status, excluded readers with the reason. */
export async function listBroadcastRecipients(deps: BroadcastDeps, accountId: string, id: string, q: { status?: ReaderStatus; variant?: number; pageNumber: number; pageSize: number }) {
  const b = await broadcastOf(deps, accountId, id);
  return recipientsOf(deps.recipients, accountId).page(b._id, q, q.pageNumber, q.pageSize);
}

/** A new broadcast to the source's DELIVERED recipients no human opened (checked against the rules again when it sends). */
export async function resendToNonOpeners(deps: BroadcastDeps, accountId: string, id: string, req: { subject?: string; sendAt?: string }): Promise<BroadcastDoc> {
  const sendAt = instantOf(deps, req.sendAt, 'body.sendAt');
  const source = await broadcastOf(deps, accountId, id);
  if (source.status !== 'SENT') throw failedPrecondition('broadcast_not_sent', `the broadcast is ${source.status}: only a SENT broadcast can be resent to its non-openers`);
  const winnerSubject = source.abTest && source.winner !== null ? source.abTest.subjects[source.winner] : null;
  const input = broadcastValues({
    name: `${source.name} (non-openers)`.slice(0, MAX_NAME),
    templateName: source.templateName,
    senderProfileId: source.senderProfileId,
    segmentId: source.segmentId,
    topicId: source.topicId,
    subject: req.subject ?? source.subject ?? winnerSubject,
    sendWindow: source.sendWindow,
  });
  const now = deps.now();
  const draft = await deps.broadcasts.insert(newBroadcast(deps, accountId, input, now, source._id));
  return req.sendAt === undefined ? draft : scheduleDraft(deps, draft, sendAt);
}

/** Senders and templates a broadcast that is SCHEDULED or SENDING names cannot be deleted; null when none does. */
export async function broadcastsNaming(deps: Pick<BroadcastDeps, 'broadcasts'>, accountId: string, member: 'templateName' | 'senderProfileId' | 'segmentId' | 'topicId', value: string) {
  const { count, broadcasts } = await deps.broadcasts.naming(accountId, member, value, 50);
  return count ? { count, broadcasts: broadcasts.map((b) => ({ id: b._id, name: b.name })) } : null;
}

