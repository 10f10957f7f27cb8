/**
 * The contact-independent half of a purchase condition, shared by the evaluator and the compiler:
 * which sources are in scope, in which zone each reads the period, and whether the capture window
 * proves the ABSENCE of orders over an interval (the API contract: absence proves FALSE only when every source in
 * scope has a complete baseline and the interval lies within its captured window).
 *
 * Every purchase operator is defined (purchaseOperatorIn below) from "has a matching order in interval I"
 * with three-valued logic, where I is one of:
 *   ALL    all time (no period)            IN     the period
 *   BEFORE before the period's first day   AFTER  after the period's last day   SINCE  from the period's first day on
 * A found order proves TRUE for its interval; no order proves FALSE only when absenceProven(I).
 * Consequence worth knowing: an interval that is open to the past (ALL, BEFORE) is never inside a
 * captured window, so "no order before the period" is never proven, and FIRST_PURCHASE_IN_PERIOD is at
 * best UNKNOWN, never TRUE (an earlier order or no order in the period still prove FALSE).
 */
import type { PurchaseSourceFacts, EvaluationFacts } from './evaluation-facts';
import type { PurchaseOperator, PurchasePeriod, PurchaseSegmentCondition } from './expression';
import { addDays, localDateOf, startOfLocalDay } from './time';

export type OrderInterval = 'ALL' | 'IN' | 'BEFORE' | 'AFTER' | 'SINCE';

/** Three-valued logic over any representation: truth values (evaluate.ts) or filter pairs (compile.ts). */
export interface PurchaseLogic<X> {
  /** "At least k matching orders in the interval"; k <= 0 is TRUE. */
  atLeast(k: number, interval: OrderInterval): X;
  not(x: X): X;
  and(xs: X[]): X;
}

/**
 * The purchase operators, defined once from "at least k matching orders in interval I": the evaluator
 * and the compiler both call this, so a contact's truth and the query that finds it cannot drift apart.
 */
export function purchaseOperatorIn<X>(operator: PurchaseOperator, purchase: PurchaseSegmentCondition, logic: PurchaseLogic<X>): X {
  const { atLeast, not, and } = logic;
  const has = (interval: OrderInterval) => atLeast(1, interval);
  const main: OrderInterval = purchase.period ? 'IN' : 'ALL';
  const n = purchase.count ?? 0;
  switch (operator) {
    case 'PURCHASED':
    case 'ORDER_VALUE_AT_LEAST':
    case 'ORDER_VALUE_AT_MOST':
    case 'COUPON_USED':
      return has(main);
    case 'NOT_PURCHASED':
      return not(has(main));
    case 'PURCHASE_COUNT_AT_LEAST':
      return atLeast(n, main);
    case 'PURCHASE_COUNT_AT_MOST':
      return not(atLeast(n + 1, main));
    case 'PURCHASE_COUNT_EQUALS':
      return and([atLeast(n, main), not(atLeast(n + 1, main))]);
    case 'FIRST_PURCHASE_IN_PERIOD':
      return and([has('IN'), not(has('BEFORE'))]);
    case 'LAST_PURCHASE_IN_PERIOD':
      return and([has('IN'), not(has('AFTER'))]);
    case 'LAST_PURCHASE_BEFORE_PERIOD':
      return and([has('BEFORE'), not(has('SINCE'))]);
  }
}

/** A period as local dates, both inclusive. */
export interface LocalPeriod {
  from: string;
  to: string;
}

export interface ScopedSource {
  id: string;
  /** The zone this source's orders are read in for this condition. */
  zone: string;
  /** Undefined for a source the account no longer has: its orders still prove facts, its absence nothing. */
  facts: PurchaseSourceFacts | undefined;
  /** The condition's period in this source's zone; null for all time. */
  period: LocalPeriod | null;
}

/** LAST_DAYS n: the n local calendar days ending today, today included. DATE_RANGE: from..to. */
export function localPeriod(period: PurchasePeriod, zone: string, now: Date): LocalPeriod {
  if (period.kind === 'LAST_DAYS') {
    const today = localDateOf(now, zone);
    return { from: addDays(today, -((period.days ?? 1) - 1)), to: today };
  }
  return { from: period.from as string, to: period.to as string };
}

/** Sources in scope: the named one, or every source of the account when sourceId is null. */
export function scopedSources(purchase: PurchaseSegmentCondition, context: EvaluationFacts): ScopedSource[] {
  const byId = new Map(context.purchaseSources.map((s) => [s.id, s]));
  const ids = purchase.sourceId ? [purchase.sourceId] : context.purchaseSources.map((s) => s.id);
  return ids.map((id) => {
    const facts = byId.get(id);
    const zone = facts?.timeZone || purchase.timeZoneId || 'UTC';
    return { id, zone, facts, period: purchase.period ? localPeriod(purchase.period, zone, context.now) : null };
  });
}

/** An interval as inclusive local-date bounds (undefined = open). */
export function localBounds(interval: OrderInterval, period: LocalPeriod | null): { from?: string; to?: string } {
  if (interval === 'ALL') return {};
  if (!period) throw new Error(`purchase interval ${interval} needs a period`);
  switch (interval) {
    case 'IN':
      return { from: period.from, to: period.to };
    case 'BEFORE':
      return { to: addDays(period.from, -1) };
    case 'AFTER':
      return { from: addDays(period.to, 1) };
    case 'SINCE':
      return { from: period.from };
  }
}

/** The same interval as instants in the source's zone: [gte, lt), undefined = open. */
export function instantBounds(interval: OrderInterval, source: ScopedSource): { gte?: Date; lt?: Date } {
  const { from, to } = localBounds(interval, source.period);
  return {
    gte: from === undefined ? undefined : startOfLocalDay(from, source.zone),
    lt: to === undefined ? undefined : startOfLocalDay(addDays(to, 1), source.zone),
  };
}

/** Whether "no order of this source in the interval" is a proven fact at `now`. */
export function absenceProven(interval: OrderInterval, source: ScopedSource, now: Date): boolean {
  const { gte, lt } = instantBounds(interval, source);
  const start = gte ? gte.getTime() : -Infinity;
  // Orders after now cannot be missing yet: the interval only needs to be known up to now.
  const end = Math.min(lt ? lt.getTime() : Infinity, now.getTime());
  if (start >= end) return true;
  const facts = source.facts;
  if (!facts || facts.baselineOpen || !facts.capturedOrdersFromUtc) return false;
  if (start < facts.capturedOrdersFromUtc.getTime()) return false;
  return !facts.capturedOrdersToUtc || end <= facts.capturedOrdersToUtc.getTime();
}

/** Absence is proven for the condition only when it is proven for every source in scope. */
export function absenceProvenForAll(interval: OrderInterval, sources: readonly ScopedSource[], now: Date): boolean {
  return sources.every((s) => absenceProven(interval, s, now));
}
