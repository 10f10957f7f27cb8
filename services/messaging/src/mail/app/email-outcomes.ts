// What became of the mail: one count per message transition, the vocabulary of the email facts and
// reports (sent, delivered, bounced, complained) plus deferred (a try the relay refused for now) and
// failed (retries used up). Counted once the transition is recorded, so a duplicate report or a
// redelivered job counts nothing. The bounce and complaint rates SREs alert on are bounced / sent and
// complained / sent, as the email reports compute them.
import { outcomeCounter, type Registry } from '@mailer/kit';

export const EMAIL_OUTCOMES = ['sent', 'delivered', 'deferred', 'bounced', 'complained', 'failed'] as const;
export type EmailOutcome = (typeof EMAIL_OUTCOMES)[number];

export interface EmailOutcomeCounter {
  inc(labels: { outcome: EmailOutcome }): void;
}

/** `messaging_email_outcomes_total{outcome}` on the process registry, every outcome at 0 from the start. */
export function emailOutcomeCounter(registry: Registry): EmailOutcomeCounter {
  return outcomeCounter(registry, {
    name: 'messaging_email_outcomes_total',
    help: 'Email messages by recorded outcome: sent (the relay accepted it), delivered, deferred (one per try refused for now), bounced, complained, failed (retries used up)',
    label: 'outcome',
    values: EMAIL_OUTCOMES,
  });
}
