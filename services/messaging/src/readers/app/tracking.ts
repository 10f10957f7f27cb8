// Open pixel and click redirect (the API contract "Delivery facts, tracking"): count the event on the message
// and record its email.* fact in the same transaction. A token that does not verify, a message that
// does not exist and a link index the message does not have are all "not found": the caller answers
// 404 and never redirects anywhere else.
import { atomically, type Clock } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { isMachineEvent } from '@mailer/tokens';
import { emailFact } from '../../mail/events/email-facts';
import { messagesOf, type EmailMessageDoc, type MessageCollections } from '../../mail/store/messages';
import type { OutboxRepository } from '@mailer/nats';
import type { PublicLinks } from './public-links';

export interface TrackingDeps extends Clock {
  store: Store;
  messages: MessageCollections;
  outbox: OutboxRepository;
  links: PublicLinks;
  /** MACHINE_EVENT_WINDOW_MS: an event this soon after delivery is a machine's. */
  machineWindowMs: number;
  notifyOutbox(): void;
}

/** What the request tells about who fetched the pixel or followed the link. */
export interface Visit {
  userAgent: string | null;
  ip: string | null;
  /** A HEAD request: link checkers probe with it, mail clients and browsers never do. */
  probe?: boolean;
}

/**
 * A machine event: the message was never handed to a relay (nobody can have read it), or this comes
 * within the window after delivery, or is a HEAD probe, or from a known privacy proxy, link scanner
 * or automation (@mailer/tokens lists, documented in the README).
 */
export function isMachine(message: Pick<EmailMessageDoc, 'deliveredAt' | 'sentAt'>, visit: Visit, at: Date, windowMs: number): boolean {
  const delivered = message.deliveredAt ?? message.sentAt;
  if (!delivered) return true;
  // Negative too: a scanner may fetch before the relay's acceptance is recorded.
  if (at.getTime() - delivered.getTime() < windowMs) return true;
  if (visit.probe) return true;
  // The delivery window is ours (the setting), so the list check is asked without it.
  return isMachineEvent({ at, userAgent: visit.userAgent, ip: visit.ip });
}

/** Records an open; false when the token or its message is not found. */
export async function recordOpen(deps: TrackingDeps, token: string, visit: Visit): Promise<boolean> {
  const claims = deps.links.verify('open', token);
  if (!claims) return false;
  const repo = messagesOf(deps.messages, claims.accountId);
  const message = await repo.get(claims.messageId);
  if (!message) return false;
  const at = deps.now();
  const machine = isMachine(message, visit, at, deps.machineWindowMs);
  await atomically(deps.store, async (tx) => {
    await repo.recordOpen(message, machine, at, tx);
    await deps.outbox.record(tx, [emailFact('email.opened', message, at, { machine })]);
  });
  deps.notifyOutbox();
  return true;
}

/** Records a click; the original URL to redirect to, or null when token, message or link is not found. */
export async function recordClick(deps: TrackingDeps, token: string, visit: Visit): Promise<string | null> {
  const claims = deps.links.verify('click', token);
  if (!claims) return null;
  const repo = messagesOf(deps.messages, claims.accountId);
  const message = await repo.get(claims.messageId);
  const url = message?.links[claims.linkIndex];
  // Only web links were rewritten; anything else stored here is never a redirect target.
  if (!message || url === undefined || !/^https?:\/\//i.test(url)) return null;
  const at = deps.now();
  const machine = isMachine(message, visit, at, deps.machineWindowMs);
  await atomically(deps.store, async (tx) => {
    await repo.recordClick(message, machine, at, tx);
    // A reader's click proves the mail was opened (its images may be blocked): that open counts once.
    const impliedOpen = !machine && (await repo.recordImpliedOpen(message, at, tx));
    await deps.outbox.record(tx, [
      ...(impliedOpen ? [emailFact('email.opened', message, at, { machine: false })] : []),
      emailFact('email.clicked', message, at, { machine, url }),
    ]);
  });
  deps.notifyOutbox();
  return url;
}
