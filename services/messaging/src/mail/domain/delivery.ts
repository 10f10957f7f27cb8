// The delivery worker's decisions, as pure functions: what an SMTP answer means for the message
// (the API contract "Transactional email": 250 SENT, 4xx or no answer DEFERRED, 5xx BOUNCED at once), when a
// deferred message is tried again, and which in-flight attempt a new delivery may take over.

/** What one send attempt came to. */
export type SendOutcome =
  | { kind: 'SENT'; smtpCode: number; response: string }
  | { kind: 'DEFERRED' | 'BOUNCED'; smtpCode: number | null; response: string };

/** The error nodemailer rejects a send with (the members this code reads). */
export interface SmtpError {
  message?: string;
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
}

// Responses are stored and shown to the customer: keep them short.
const MAX_RESPONSE = 500;
const clip = (s: string) => (s.length > MAX_RESPONSE ? `${s.slice(0, MAX_RESPONSE)}…` : s);

/** The reply code at the start of an SMTP response ("250 2.0.0 Ok" -> 250), or null. */
export function smtpCodeOf(response: string | undefined): number | null {
  const m = /^([2-5]\d\d)[ -]/.exec(response ?? '') ?? /^([2-5]\d\d)$/.exec(response ?? '');
  return m ? Number(m[1]) : null;
}

/** The relay accepted the message. */
export function sentOutcome(response: string | undefined): SendOutcome {
  return { kind: 'SENT', smtpCode: smtpCodeOf(response) ?? 250, response: clip(response ?? '250') };
}

// Commands whose permanent refusal is the recipient's (or the message's) bounce. A 5xx to MAIL FROM,
// AUTH or the greeting is the relay refusing us (a wrong setting, an unknown sender domain): that is
// retried like a temporary failure so an operator can fix it before the message fails.
const RECIPIENT_COMMANDS = new Set(['RCPT TO', 'DATA']);

/** A failed send: 5xx to the recipient or the message -> BOUNCED; everything else (4xx, no answer) -> DEFERRED. */
export function failureOutcome(err: SmtpError): SendOutcome {
  const smtpCode = typeof err.responseCode === 'number' ? err.responseCode : null;
  const response = clip((err.response ?? err.message ?? String(err)).trim());
  if (smtpCode !== null && smtpCode >= 500 && RECIPIENT_COMMANDS.has(err.command ?? '')) return { kind: 'BOUNCED', smtpCode, response };
  return { kind: 'DEFERRED', smtpCode, response };
}

/**
 * The wait before the next try after the n-th temporary failure (`deferredBefore` failures came
 * before this one), or null when the schedule is used up (the message FAILED).
 */
export function retryDelayMs(scheduleSeconds: readonly number[], deferredBefore: number): number | null {
  return deferredBefore < scheduleSeconds.length ? Math.round(scheduleSeconds[deferredBefore] * 1000) : null;
}

/** Who is sending a message right now (the claim recorded before the send). */
export interface SendingClaim {
  /** Random per claim: the outcome is written only by the claim's holder. */
  token: string;
  /** The job (its stream sequence) and its delivery count. */
  job: string;
  deliveryCount: number;
  at: Date;
}

/**
 * A claim older than this is abandoned whatever its job: no send lasts that long (the transport's
 * timeouts end it first). It only matters when a job was given up with a claim left behind.
 */
export const STALE_CLAIM_MS = 15 * 60_000;

/**
 * Whether a delivery may take over an unfinished claim: a later delivery of the same job means the
 * previous one died (a live handler keeps its job from being redelivered), so it sends again (the
 * one resend a crash can cause); another job for the message waits for the claim's outcome.
 */
export function mayTakeOver(claim: SendingClaim, job: string, deliveryCount: number, now: Date): boolean {
  return (claim.job === job && claim.deliveryCount < deliveryCount) || now.getTime() - new Date(claim.at).getTime() > STALE_CLAIM_MS;
}
