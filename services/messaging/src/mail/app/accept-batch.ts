// Accepting a batch of transactional messages (POST /email-messages/batch): up to 500 messages, each
// accepted or refused on its own exactly as app/accept-message.ts would answer it alone (the same
// refusals in the same order: address, reserved names, idempotency, template, sender, render), in
// request order. What a batch shares is done once: one lookup per distinct template and sender, one
// call to the subscriber service for every recipient, one suppression read, ONE store transaction
// for every accepted message with its body and job, one wait for the jobs' publish.
//
// Idempotency per message: a message with `idempotencyKey` stores that key (as its dedupe key) and a
// hash of what was asked. The same key again answers the first message when the request is the same
// and `idempotency_key_reused` when it is not, as the Idempotency-Key header does for one request.
import { createHash } from 'node:crypto';
import { DomainError, GrpcStatus, invalid, TIME_LIMITS } from '@mailer/kit';
import { job } from '@mailer/nats/facts';
import { DuplicateKeyError } from '@mailer/store';
import type { CompiledTemplate } from '@mailer/templates';
import { canonicalAddress } from '../../templates/domain/sender-profile';
import { DEDUPE_INDEX, messagesOf, type EmailMessageDoc, type SuppressionReason } from '../store/messages';
import { suppressionsOf } from '../../readers/store/suppressions';
import type { EmailTemplateDoc } from '../../templates/store/email-templates';
import type { SenderProfileDoc } from '../../templates/store/sender-profiles';
import { answerOf, type AcceptDeps, type Accepted, type Recipient } from './accept-message';
import { checkReservedKeys, composeMessage, type Composed } from './compose-message';
import { templateForSend } from '../../templates/app/email-templates';
import { senderForSend } from '../../templates/app/sender-profiles';

export const MAX_BATCH = 500;
/**
 * Lookups and renders of a batch end within this (the gateway's deadline allows for it); past it the
 * batch is refused with nothing stored, rather than stored after its caller gave up.
 */
export const BATCH_RENDER_LIMIT_MS = TIME_LIMITS.batchRender;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface BatchMessage {
  templateName: string;
  email: string;
  substitutionData: Record<string, unknown> | null;
  eventProperties: Record<string, unknown> | null;
  /** Empty: none. */
  idempotencyKey: string;
}

export type BatchResult = ({ index: number } & Accepted) | { index: number; errorId: string; message: string };

/** The subscriber service's recipients by address, for a whole batch in one call (clients/audience.ts). */
export interface BatchRecipientLookup {
  recipientsByEmail(accountId: string, emails: string[]): Promise<Map<string, Recipient>>;
}

export type BatchDeps = AcceptDeps & {
  batchRecipients: BatchRecipientLookup;
  /** BATCH_RENDER_LIMIT_MS unless a test says otherwise. */
  batchRenderLimitMs?: number;
};

/** A message on its way: refused (with why) or with what it needs next. */
interface Item {
  index: number;
  input: BatchMessage;
  email: string;
  dedupeKey: string | null;
  requestHash: string | null;
  result?: BatchResult;
  /** A later message with the key of an earlier one in this batch answers as that one. */
  sameAs?: Item;
}

const refusal = (index: number, err: DomainError): BatchResult => ({ index, errorId: err.errorId, message: err.message });
const keyReused = (index: number): BatchResult => ({ index, errorId: 'idempotency_key_reused', message: 'this idempotencyKey was used for a different message' });

/**
 * A refusal of this message: a DomainError the single send would answer with. Anything else (the
 * store failing, a peer not answering) fails the whole batch, so nothing half-done is answered.
 */
function refusable(err: unknown): DomainError {
  if (err instanceof DomainError && err.code !== GrpcStatus.UNAVAILABLE) return err;
  throw err;
}

/** A canonical text of the message as asked (object members in any order are the same request). */
function requestHash(m: BatchMessage, email: string): string {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])])) : Array.isArray(v) ? v.map(canonical) : v;
  return createHash('sha256').update(JSON.stringify(canonical([m.templateName, email, m.substitutionData, m.eventProperties]))).digest('base64url');
}

export async function acceptBatch(deps: BatchDeps, accountId: string, inputs: BatchMessage[]): Promise<BatchResult[]> {
  if (inputs.length < 1 || inputs.length > MAX_BATCH) throw invalid('validation_failed', `messages must hold 1 to ${MAX_BATCH} messages`, [{ path: 'body.messages', problem: `1..${MAX_BATCH} items` }]);
  for (let attempt = 1; ; attempt++) {
    try {
      return await acceptOnce(deps, accountId, inputs);
    } catch (err) {
      // A concurrent request with one of these keys committed first: asked again, its message is found.
      if (attempt < 3 && err instanceof DuplicateKeyError && err.index === DEDUPE_INDEX) continue;
      throw err;
    }
  }
}

async function acceptOnce(deps: BatchDeps, accountId: string, inputs: BatchMessage[]): Promise<BatchResult[]> {
  const started = Date.now();
  const repo = messagesOf(deps.messages, accountId);
  const items: Item[] = inputs.map((input, index) => ({ index, input, email: '', dedupeKey: null, requestHash: null }));
  const byKey = new Map<string, Item>();
  for (const item of items) {
    const { input, index } = item;
    const email = canonicalAddress(input.email);
    if (!email) {
      item.result = { index, errorId: 'invalid_email', message: `email "${input.email.slice(0, 80)}" is not a valid email address` };
      continue;
    }
    item.email = email;
    try {
      checkReservedKeys(input.substitutionData, `body.messages[${index}].substitutionData`);
    } catch (err) {
      item.result = refusal(index, refusable(err));
      continue;
    }
    if (!input.idempotencyKey) continue;
    if (input.idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      item.result = { index, errorId: 'validation_failed', message: `idempotencyKey may have at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` };
      continue;
    }
    item.dedupeKey = `batch:${input.idempotencyKey}`;
    item.requestHash = requestHash(input, email);
    const first = byKey.get(item.dedupeKey);
    if (first) {
      if (first.requestHash === item.requestHash) item.sameAs = first;
      else item.result = keyReused(index);
    } else {
      byKey.set(item.dedupeKey, item);
    }
  }

  // Keys used before: the same request answers its message, another one is refused.
  const stored = new Map((await repo.byDedupeKeys([...byKey.keys()])).map((m) => [m.dedupeKey!, m]));
  for (const [key, item] of byKey) {
    const m = stored.get(key);
    if (m) item.result = m.requestHash === item.requestHash ? { index: item.index, ...answerOf(m) } : keyReused(item.index);
  }

  const open = () => items.filter((i) => !i.result && !i.sameAs);
  const [templates, recipients, suppressed] = await Promise.all([
    templatesOf(deps, accountId, open()),
    deps.batchRecipients.recipientsByEmail(accountId, [...new Set(open().map((i) => i.email))]),
    suppressionsOf(deps.suppressions, accountId).findMany([...new Set(open().map((i) => i.email))]),
  ]);
  const senders = await sendersOf(deps, accountId, templates);

  const composed: Array<{ item: Item; mail: Composed }> = [];
  for (const item of open()) {
    const found = templates.get(item.input.templateName)!;
    if (found instanceof DomainError) {
      item.result = refusal(item.index, found);
      continue;
    }
    const sender = senders.get(found.template.senderProfileId ?? '')!;
    if (sender instanceof DomainError) {
      item.result = refusal(item.index, sender);
      continue;
    }
    const recipient = recipients.get(item.email) ?? null;
    const suppressionReason: SuppressionReason | null = suppressed.get(item.email) ?? (recipient?.status === 'BLOCKED' ? 'BLOCKED' : null);
    try {
      const mail = await composeMessage(deps, {
        accountId,
        kind: 'TRANSACTIONAL',
        template: { name: found.template.name, tracking: found.template.tracking },
        compiled: found.compiled,
        sender,
        email: item.email,
        recipient,
        topicId: null,
        substitutionData: item.input.substitutionData ?? {},
        event: null,
        eventProperties: item.input.eventProperties,
        dedupeKey: item.dedupeKey,
        suppressionReason,
      });
      if (item.requestHash) mail.message.requestHash = item.requestHash;
      composed.push({ item, mail });
    } catch (err) {
      item.result = refusal(item.index, refusable(err));
    }
  }

  if (Date.now() - started > (deps.batchRenderLimitMs ?? BATCH_RENDER_LIMIT_MS)) {
    throw new DomainError(GrpcStatus.UNAVAILABLE, 'service_unavailable', 'The messaging service is too busy to accept this batch in time; nothing was stored, retry later.');
  }
  if (composed.length) {
    const queued = composed.filter(({ mail }) => mail.message.status === 'QUEUED');
    await deps.store.transaction(async (tx) => {
      await repo.insertMany(composed.map(({ mail }) => mail), tx);
      if (queued.length) await deps.outbox.record(tx, queued.map(({ mail }) => job('email', { accountId, messageId: mail.message._id })));
    });
    for (const { item, mail } of composed) item.result = { index: item.index, ...answerOf(mail.message as EmailMessageDoc) };
    if (queued.length) {
      deps.notify();
      if (!(await deps.awaitPublished())) deps.logger?.warn({ accountId, messages: queued.length }, 'email jobs of a batch not published in time; answering anyway (they stay in the outbox)');
    }
  }
  return items.map((item) => (item.sameAs ? { ...item.sameAs.result!, index: item.index } : item.result!));
}

type TemplateFound = { template: EmailTemplateDoc; compiled: CompiledTemplate } | DomainError;

/** Each distinct template once: the template, or why it cannot be used (template_not_found). */
async function templatesOf(deps: BatchDeps, accountId: string, items: Item[]): Promise<Map<string, TemplateFound>> {
  const names = [...new Set(items.map((i) => i.input.templateName))];
  const found = await Promise.all(names.map((name) => templateForSend(deps, accountId, name).catch(refusable)));
  return new Map(names.map((name, i) => [name, found[i]]));
}

/** The sender of each template once (its profile, else the account's default), or why there is none. */
async function sendersOf(deps: BatchDeps, accountId: string, templates: Map<string, TemplateFound>): Promise<Map<string, SenderProfileDoc | DomainError>> {
  const ids = [...new Set([...templates.values()].flatMap((t) => (t instanceof DomainError ? [] : [t.template.senderProfileId ?? ''])))];
  const found = await Promise.all(ids.map((id) => senderForSend(deps, accountId, id || null).catch(refusable)));
  return new Map(ids.map((id, i) => [id, found[i]]));
}
