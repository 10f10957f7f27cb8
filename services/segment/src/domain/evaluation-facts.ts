/**
 * What evaluation and compilation read besides the expression and the contact. Passed in, so both
 * stay pure and a count, a preview and the reference evaluator see the very same facts.
 */
import type { SegmentExpression } from './expression';

/** A purchase source as PurchaseCaptureScopeDto describes it. */
export interface PurchaseSourceFacts {
  id: string;
  /** IANA zone the source's dates are read in; null falls back to the condition's timeZoneId, then UTC. */
  timeZone?: string | null;
  /** Orders are captured completely from this instant on (once the baseline is complete). */
  capturedOrdersFromUtc?: Date | null;
  /** Set when capture stopped; null while the source captures live. */
  capturedOrdersToUtc?: Date | null;
  /** True while the baseline (historical import) is incomplete: absence of orders then proves nothing. */
  baselineOpen: boolean;
}

export interface EvaluationFacts {
  /** The instant "now" for LAST_DAYS periods and response operators. */
  now: Date;
  /** Expressions of the segments referenced (directly or transitively) by CONTAINED_IN / NOT_CONTAINED_IN. */
  segments: Readonly<Record<string, SegmentExpression>>;
  /** Every purchase source of the account (a condition with sourceId null ranges over all of them). */
  purchaseSources: readonly PurchaseSourceFacts[];
  /** Topics that are active now: TOPIC_OPTED_OUT only counts opt-outs from these. */
  activeTopicIds: readonly string[];
}

/** Compilation also pins the account: every filter carries accountId at its top level. */
export interface CompileFacts extends EvaluationFacts {
  accountId: string;
}
