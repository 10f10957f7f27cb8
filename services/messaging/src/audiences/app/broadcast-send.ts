// Use case SendBroadcast (the send poller, on a claimed broadcast with something due), step by step,
// each step ONE store transaction guarded by the broadcast's status and audience cursor:
// 1. SCHEDULED and due -> SENDING (its tally opened).
// 2. The audience, page by page (as for RSS issues): every reader of the page is recorded as a
//    recipient or excluded with its reason; recipients whose mail may go now (inside their send
//    window, not waiting for an A/B winner) get it queued in the same transaction, the others wait
//    with a due time. After a kill -9 a page is wholly recorded or not at all; asked again, the
//    cursor (and every message's dedupe key) makes sure nobody is recorded or mailed twice.
// 3. A/B: once decideAfterMinutes have passed, the winner (domain/broadcast.ts pickWinner).
// 4. Waiting recipients that are due: checked against the audience rules again (a reader may have
//    unsubscribed meanwhile: then excluded), their mail queued.
// 5. Nothing waits any more: SENT, with broadcast.sent in the same transaction; else due again at
//    the next waiting recipient's time (or the decision's).
// A CANCELLED or FAILED broadcast's waiting recipients are removed (they get nothing). A failed step is retried
// after BROADCAST_SEND_RETRY_SECONDS; a peer that does not answer is retried without limit, any
// other failure counts, and after BROADCAST_SEND_MAX_ATTEMPTS in a row the broadcast is FAILED.
import { DomainError, GrpcStatus } from '@mailer/kit';
import { domainFact, job } from '@mailer/nats/facts';
import { DuplicateKeyError, type AccountFilter, type BulkOp } from '@mailer/store';
import { pickWinner, testVariant, type ExclusionReason } from '../domain/broadcast';
import { readerZone, windowOpensAt } from '../domain/send-window';
import { decided, excludedLater, recipientsOf, RecipientChanged, rowId, TallyMoves, type RecipientDoc } from '../store/broadcast-recipients';
import type { BroadcastDoc } from '../store/broadcasts';
import { messagesOf } from '../../mail/store/messages';
import { suppressionsOf } from '../../readers/store/suppressions';
import type { Composed } from '../../mail/app/compose-message';
import { composeBroadcastMail, contentOf, failedMail, isRenderFailure, type BroadcastContent, type ReaderMail } from './broadcast-mail';
import type { AudienceReader, BroadcastDeps } from './broadcast-ports';

/** Another replica's step or a cancel changed the broadcast first: this pass gives way. */
class StepSuperseded extends Error {}

export async function sendBroadcast(deps: BroadcastDeps, accountId: string, broadcastId: string): Promise<void> {
  let b = await deps.broadcasts.get(accountId, broadcastId);
  if (!b) return;
  if (b.status === 'CANCELLED' || b.status === 'FAILED') return removeUnqueued(deps, b);
  if (b.status === 'SCHEDULED' && b.sendAt && b.sendAt <= deps.now()) b = await beginSending(deps, b, 'SCHEDULED');
  if (!b || b.status !== 'SENDING') {
    if (b) await deps.broadcasts.setSendDue(accountId, broadcastId, b.status === 'SCHEDULED' ? b.sendAt : null);
    return;
  }
  try {
    const content = await contentOf(deps, b);
    while (!b.audienceDone) b = await decidePage(deps, b, content);
    if (b.abTest && b.winner === null && b.decideAt && b.decideAt <= deps.now()) b = await decideWinner(deps, b);
    const repo = recipientsOf(deps.recipients, accountId);
    for (let due = await repo.due(b._id, deps.now(), deps.settings.pageSize, winnerKnown(b)); due.length; due = await repo.due(b._id, deps.now(), deps.settings.pageSize, winnerKnown(b))) {
      await queueWaiting(deps, b, content, due);
    }
    await finishOrWait(deps, b);
  } catch (err) {
    if (!(err instanceof StepSuperseded || err instanceof RecipientChanged || err instanceof DuplicateKeyError)) return sendFailed(deps, b, err);
    // A cancel (or another replica) came first: whatever is due now (a cancel's clean-up) need not
    // wait for this pass's lease to lapse.
    await deps.broadcasts.releaseLease(accountId, broadcastId);
    deps.wakeSend(deps.now());
  }
}

const winnerKnown = (b: BroadcastDoc) => !b.abTest || b.winner !== null;
const leaseFrom = (deps: BroadcastDeps) => new Date(deps.now().getTime() + deps.settings.leaseMs);

/**
 * DRAFT (scheduled for now) or SCHEDULED (its time came) -> SENDING, with the tally opened in the
 * same transaction: the A/B decision is due decideAfterMinutes later. Null when it left `from` meanwhile.
 */
export async function beginSending(deps: BroadcastDeps, b: BroadcastDoc, from: 'DRAFT' | 'SCHEDULED'): Promise<BroadcastDoc | null> {
  const now = deps.now();
  const decideAt = b.abTest ? new Date(now.getTime() + b.abTest.decideAfterMinutes * deps.settings.minuteMs) : null;
  return deps.store.transaction(async (tx) => {
    const started = await deps.broadcasts.transition(b.accountId, b._id, from, { status: 'SENDING', sendAt: b.sendAt ?? now, startedAt: now, decideAt, sendDueAt: now, updatedAt: now }, tx);
    if (started) await recipientsOf(deps.recipients, b.accountId).open(b._id, b.abTest?.subjects.length ?? 0, tx);
    return started;
  });
}

/** The next page of readers: the account's (with the rule that excludes each), or for a resend the non-openers of the broadcast it resends. */
async function nextReaders(deps: BroadcastDeps, b: BroadcastDoc): Promise<{ readers: AudienceReader[]; next: string }> {
  const rules = { segmentId: b.segmentId, topicId: b.topicId };
  if (!b.resendOf) return deps.audience.readers(b.accountId, { ...rules, after: b.cursor, pageSize: deps.settings.pageSize });
  const source = await recipientsOf(deps.recipients, b.accountId).after(b.resendOf, 'DELIVERED', b.cursor, deps.settings.pageSize);
  if (!source.length) return { readers: [], next: '' };
  const opened = await messagesOf(deps.messages, b.accountId).openedAmong(source.map((r) => r.messageId!));
  const nonOpeners = source.filter((r) => !opened.has(r.messageId!));
  const checked = new Map((await deps.audience.check(b.accountId, { ...rules, subscriberIds: nonOpeners.map((r) => r.subscriberId) })).map((r) => [r.id, r]));
  const readers = nonOpeners.map((r): AudienceReader => checked.get(r.subscriberId) ?? { id: r.subscriberId, email: r.email, firstName: null, fields: {}, exclusion: 'NOT_ACTIVE' });
  return { readers, next: source.length < deps.settings.pageSize ? '' : source[source.length - 1]._id };
}

/**
 * Each reader's mail composed. A render that fails is tried once more on its own (the render time
 * limit is wall time: a burst on a busy machine can pass it); a reader whose mail still cannot be
 * rendered gets a FAILED message. Every reader failing: the content cannot be sent at all.
 */
async function composeAll(deps: BroadcastDeps, b: BroadcastDoc, content: BroadcastContent, mails: ReaderMail[]): Promise<Composed[]> {
  const compose = (mail: ReaderMail) => composeBroadcastMail(deps, b, content, mail).catch((err: unknown) => {
    if (!isRenderFailure(err)) throw err;
    return err;
  });
  const first = await Promise.all(mails.map(compose));
  let failure: DomainError | null = null;
  const composed: Composed[] = [];
  for (const [i, result] of first.entries()) {
    const again = result instanceof DomainError ? await compose(mails[i]) : result;
    if (again instanceof DomainError) failure = again;
    composed.push(again instanceof DomainError ? await failedMail(deps, b, content, mails[i], again) : again);
  }
  if (failure && composed.every((c) => c.message.status === 'FAILED')) throw failure;
  return composed;
}

/** What a reader's row and tally become once their mail is composed (FAILED: the render failed). */
const failedRender = { 'status.PENDING': -1, 'status.FAILED': 1 };

async function decidePage(deps: BroadcastDeps, b: BroadcastDoc, content: BroadcastContent): Promise<BroadcastDoc> {
  const { readers, next } = await nextReaders(deps, b);
  const now = deps.now();
  const suppressed = await suppressionsOf(deps.suppressions, b.accountId).findMany(readers.filter((r) => !r.exclusion).map((r) => r.email));
  const moves = new TallyMoves(b.accountId, b._id);
  const rows: RecipientDoc[] = [];
  const queueNow: Array<{ row: RecipientDoc; mail: ReaderMail }> = [];
  for (const r of readers) {
    const reason: ExclusionReason | null = r.exclusion ?? (suppressed.has(r.email) ? 'SUPPRESSED' : null);
    const variant = !reason && b.abTest ? testVariant(b._id, r.id, b.abTest) : null;
    // The rest of an A/B test waits for the winner; everyone waits for their window.
    const earliest = b.abTest && variant === null ? b.decideAt! : now;
    const dueAt = reason ? null : b.sendWindow ? windowOpensAt(b.sendWindow, readerZone(b.sendWindow, r.fields), earliest) : earliest;
    const row: RecipientDoc = { _id: rowId(b._id, r.id), accountId: b.accountId, broadcastId: b._id, subscriberId: r.id, email: r.email, status: reason ? 'EXCLUDED' : 'PENDING', reason, variant, messageId: null, dueAt };
    moves.add(r.id, decided(reason, variant));
    if (dueAt && dueAt <= now) {
      row.dueAt = null;
      queueNow.push({ row, mail: { email: r.email, recipient: r, variant } });
    }
    rows.push(row);
  }
  const composed = await composeAll(deps, b, content, queueNow.map((q) => q.mail));
  composed.forEach(({ message }, i) => {
    const { row } = queueNow[i];
    row.messageId = message._id;
    if (message.status === 'FAILED') {
      row.status = 'FAILED';
      moves.add(row.subscriberId, failedRender);
    }
  });
  await commitStep(deps, b, { cursor: next, audienceDone: next === '' }, moves, { insert: rows }, composed);
  return { ...b, cursor: next, audienceDone: next === '' };
}

/** Waiting recipients that are due: the rules checked again now, then their mail queued (the rest of an A/B test: the winner's). */
async function queueWaiting(deps: BroadcastDeps, b: BroadcastDoc, content: BroadcastContent, due: RecipientDoc[]): Promise<void> {
  const readers = new Map((await deps.audience.check(b.accountId, { segmentId: b.segmentId, topicId: b.topicId, subscriberIds: due.map((r) => r.subscriberId) })).map((r) => [r.id, r]));
  const suppressed = await suppressionsOf(deps.suppressions, b.accountId).findMany([...readers.values()].filter((r) => !r.exclusion).map((r) => r.email));
  const moves = new TallyMoves(b.accountId, b._id);
  const updates: BulkOp<AccountFilter>[] = [];
  const queued: Array<{ row: RecipientDoc; variant: number | null; mail: ReaderMail }> = [];
  const update = (row: RecipientDoc, $set: Partial<RecipientDoc>) =>
    updates.push({ updateOne: { filter: { _id: row._id, accountId: b.accountId, status: 'PENDING', messageId: null }, update: { $set: { ...$set, dueAt: null } } } });
  for (const row of due) {
    const r = readers.get(row.subscriberId);
    // A reader the account no longer has is not active.
    const reason: ExclusionReason | null = !r ? 'NOT_ACTIVE' : (r.exclusion ?? (suppressed.has(r.email) ? 'SUPPRESSED' : null));
    if (reason || !r) {
      update(row, { status: 'EXCLUDED', reason: reason ?? 'NOT_ACTIVE' });
      moves.add(row.subscriberId, excludedLater(reason ?? 'NOT_ACTIVE', row.variant));
      continue;
    }
    const variant = row.variant ?? (b.abTest ? b.winner : null);
    if (row.variant === null && variant !== null) moves.add(row.subscriberId, { [`variants.v${variant}.recipients`]: 1 });
    queued.push({ row, variant, mail: { email: r.email, recipient: r, variant } });
  }
  const composed = await composeAll(deps, b, content, queued.map((q) => q.mail));
  composed.forEach(({ message }, i) => {
    const { row, variant, mail } = queued[i];
    const failed = message.status === 'FAILED';
    if (failed) moves.add(row.subscriberId, failedRender);
    update(row, { messageId: message._id, variant, email: mail.email, ...(failed ? { status: 'FAILED' as const } : {}) });
  });
  await commitStep(deps, b, {}, moves, { update: updates }, composed);
}

/** One step: the broadcast guarded (and its lease renewed), its rows and tally, the messages and their jobs, all or nothing. */
async function commitStep(deps: BroadcastDeps, b: BroadcastDoc, changes: Partial<BroadcastDoc>, moves: TallyMoves, rows: Parameters<ReturnType<typeof recipientsOf>['write']>[1], composed: Composed[]): Promise<void> {
  const queued = composed.filter((c) => c.message.status === 'QUEUED');
  await deps.store.transaction(async (tx) => {
    if (!(await deps.broadcasts.step(b, { ...changes, leaseUntil: leaseFrom(deps), lastError: null, sendFailures: 0 }, tx))) throw new StepSuperseded();
    await recipientsOf(deps.recipients, b.accountId).write(moves, rows, tx);
    await messagesOf(deps.messages, b.accountId).insertMany(composed, tx);
    if (queued.length) await deps.outbox.record(tx, queued.map(({ message }) => job('email', { accountId: b.accountId, messageId: message._id })));
  });
  if (queued.length) deps.notifyOutbox();
}

/** The A/B winner from the variants' human clicks or opens per delivered mail. */
async function decideWinner(deps: BroadcastDeps, b: BroadcastDoc): Promise<BroadcastDoc> {
  const { variants } = await recipientsOf(deps.recipients, b.accountId).reconciliation(b._id);
  const stats = b.abTest!.subjects.map((_, i) => variants[i] ?? { delivered: 0, humanOpens: 0, humanClicks: 0 });
  const winner = pickWinner(stats, b.abTest!.metric);
  const decided = await deps.broadcasts.transition(b.accountId, b._id, 'SENDING', { winner });
  if (!decided) throw new StepSuperseded();
  deps.logger?.info({ broadcastId: b._id, accountId: b.accountId, winner, stats }, 'A/B test decided');
  return decided;
}

/** SENT (with broadcast.sent) once every recipient's mail is queued; else due again when the next waits no more. */
async function finishOrWait(deps: BroadcastDeps, b: BroadcastDoc): Promise<void> {
  const repo = recipientsOf(deps.recipients, b.accountId);
  const nextDue = await repo.nextDue(b._id);
  if (nextDue) {
    const decision = b.abTest && b.winner === null ? b.decideAt : null;
    const at = decision && decision < nextDue ? decision : nextDue;
    await deps.broadcasts.setSendDue(b.accountId, b._id, at);
    deps.wakeSend(at);
    return;
  }
  const { reconciliation } = await repo.reconciliation(b._id);
  const now = deps.now();
  await deps.store.transaction(async (tx) => {
    const sent = await deps.broadcasts.transition(b.accountId, b._id, 'SENDING', { status: 'SENT', finishedAt: now, sendDueAt: null, leaseUntil: null, lastError: null, updatedAt: now }, tx);
    if (!sent) return;
    const fact = domainFact({ type: 'broadcast.sent', accountId: b.accountId, occurredAt: now.toISOString(), broadcastId: b._id, recipientCount: reconciliation.recipients });
    // The broadcast's id names the fact: however often the last step runs, one fact.
    await deps.outbox.record(tx, [{ ...fact, id: `broadcast.sent:${b._id}` }]);
  });
  deps.notifyOutbox();
}

/** A cancelled (or failed) broadcast's recipients whose mail was never queued leave the audience: they get nothing. */
async function removeUnqueued(deps: BroadcastDeps, b: BroadcastDoc): Promise<void> {
  const repo = recipientsOf(deps.recipients, b.accountId);
  for (let rows = await repo.unqueued(b._id, deps.settings.pageSize); rows.length; rows = await repo.unqueued(b._id, deps.settings.pageSize)) {
    const moves = new TallyMoves(b.accountId, b._id);
    for (const row of rows) moves.add(row.subscriberId, { audience: -1, recipients: -1, 'status.PENDING': -1, ...(row.variant === null ? {} : { [`variants.v${row.variant}.recipients`]: -1 }) });
    await deps.store.transaction((tx) => repo.write(moves, { remove: rows.map((r) => r._id) }, tx));
  }
  await deps.broadcasts.setSendDue(b.accountId, b._id, null);
}

/** A failure a retry alone may get past: a service did not answer, or answered that it is not ready. */
const isOutage = (err: unknown) => err instanceof DomainError && (err.code === GrpcStatus.UNAVAILABLE || err.code === GrpcStatus.DEADLINE_EXCEEDED || err.code === GrpcStatus.RESOURCE_EXHAUSTED);
/** lastError: a peer's or a rule's own answer (errorId and text), never an internal error's words. */
const failureText = (err: unknown) => (err instanceof DomainError ? `${err.errorId}: ${err.message}` : 'internal_error: the mail of this broadcast could not be queued');

async function sendFailed(deps: BroadcastDeps, b: BroadcastDoc, err: unknown): Promise<void> {
  const lastError = failureText(err);
  const sendFailures = isOutage(err) ? b.sendFailures : b.sendFailures + 1;
  deps.logger?.warn({ broadcastId: b._id, accountId: b.accountId, err: err instanceof DomainError ? err.errorId : (err as Error).message, sendFailures }, "queueing a broadcast's mail failed");
  if (sendFailures < deps.settings.maxAttempts) {
    const at = new Date(deps.now().getTime() + deps.settings.retryMs);
    await deps.broadcasts.setSendDue(b.accountId, b._id, at, { lastError, sendFailures });
    deps.wakeSend(at);
    return;
  }
  const now = deps.now();
  // Due at once: its waiting recipients are removed as a cancel's are.
  const failed = await deps.broadcasts.transition(b.accountId, b._id, 'SENDING', { status: 'FAILED', finishedAt: now, sendDueAt: now, leaseUntil: null, lastError, sendFailures, updatedAt: now });
  if (!failed) return;
  deps.broadcastFailed?.(err instanceof DomainError ? err.errorId : 'internal_error');
  deps.wakeSend(now);
}
