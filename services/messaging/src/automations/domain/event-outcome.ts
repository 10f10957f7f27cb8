// What a consumed custom event led to (the API contract "Events and automations", `outcome` of GET /events).
import type { EVENT_OUTCOMES } from '@mailer/nats/facts';

export type EventOutcome = (typeof EVENT_OUTCOMES)[number];

export interface OutcomeInput {
  triggerAutomations: boolean;
  /** The account's subscriber with the event's address (found, or created from the event's consent); null: none. */
  subscriberId: string | null;
  /** The subscriber was created from the event's consent (an unknown address signed up). */
  subscriberCreated: boolean;
  /** Active automations triggered by the event's key. */
  matchedAutomationIds: readonly string[];
}

/**
 * The first rule that applies wins:
 * - `triggerAutomations: false` -> NOT_TRIGGERED (the integrator's explicit choice; `subscriberId`
 *   still tells whether the address is a subscriber);
 * - no subscriber -> NO_SUBSCRIBER (nobody a run could act for);
 * - a subscriber created from the consent -> SUBSCRIBER_CREATED (an UNCONFIRMED signup: the double
 *   opt-in mail goes out, no automation mail could reach it yet);
 * - no active automation triggered by the key -> NO_MATCHING_AUTOMATION;
 * - else RUNS_STARTED.
 */
export function eventOutcome(input: OutcomeInput): EventOutcome {
  if (!input.triggerAutomations) return 'NOT_TRIGGERED';
  if (input.subscriberId === null) return 'NO_SUBSCRIBER';
  if (input.subscriberCreated) return 'SUBSCRIBER_CREATED';
  if (input.matchedAutomationIds.length === 0) return 'NO_MATCHING_AUTOMATION';
  return 'RUNS_STARTED';
}
