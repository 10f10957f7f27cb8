// Use case of SegmentService.EvaluateSegmentMember: a saved segment's three-valued result for one
// subscriber (the messaging service's IF_IN_SEGMENT step continues only on TRUE and reports FALSE and
// UNKNOWN apart). No second evaluator: the contact is tested against the same compiled TRUE and FALSE
// filters counts, previews and member pages use (compileFor), narrowed to its id; matching neither is
// UNKNOWN, exactly as preview's unknownCount counts it.
import { invalid } from '@mailer/kit';
import type { Filter } from '../domain/compile';
import type { Truth } from '../domain/expression';
import { repositoriesOf, type SegmentDeps } from './deps';
import { compileFor, loadSegment } from './segments';

const ID_MAX = 100;

export interface MemberEvaluation {
  result: Truth;
  /**
   * false: the account has no contact with this id (never created, deleted, or another account's).
   * Its result is FALSE: a segment's members are contacts of the account (the API contract "A contact matches
   * only when TRUE"), so such a subscriber is in no segment, as counts and member pages agree.
   */
  contactFound: boolean;
}

export async function evaluateSegmentMember(deps: SegmentDeps, accountId: string, req: { segmentId: string; subscriberId: string }): Promise<MemberEvaluation> {
  const subscriberId = String(req.subscriberId ?? '').toLowerCase();
  if (subscriberId === '' || subscriberId.length > ID_MAX) {
    throw invalid('validation_failed', `subscriberId must be 1 to ${ID_MAX} characters`, [{ path: 'subscriberId', problem: 'required, at most 100 characters' }]);
  }
  // Read-after-write first: a write acknowledged before this call (e.g. an automation's earlier
  // SET_FIELD or ADD_TAGS step) is in the projection before the contact is tested.
  await deps.awaitProjection?.();
  const segment = await loadSegment(deps, accountId, String(req.segmentId ?? '').toLowerCase());
  const { trueFilter, falseFilter } = await compileFor(deps, accountId, segment.expression);
  const { contacts } = repositoriesOf(deps, accountId);
  // _id at the top level: the stores answer each of the three by the id (a point lookup), then test
  // the compiled filter on that one document.
  const one = (filter?: Filter) => contacts.count(filter ? { accountId, _id: subscriberId, $and: [filter] } : { accountId, _id: subscriberId });
  const [found, isTrue, isFalse] = await Promise.all([one(), one(trueFilter), one(falseFilter)]);
  if (found === 0) return { result: 'FALSE', contactFound: false };
  return { result: isTrue > 0 ? 'TRUE' : isFalse > 0 ? 'FALSE' : 'UNKNOWN', contactFound: true };
}

/** Subscribers evaluated at once (a broadcast's audience page). */
export const MAX_EVALUATED = 1000;

/**
 * The results for up to MAX_EVALUATED subscribers, in request order (a broadcast's exclusion
 * reasons): three reads of the named contacts (found, TRUE, FALSE) whatever their number, with the
 * same compiled filters as EvaluateSegmentMember.
 */
export async function evaluateSegmentMembers(deps: SegmentDeps, accountId: string, req: { segmentId: string; subscriberIds: string[] }): Promise<Truth[]> {
  const ids = (req.subscriberIds ?? []).map((id) => String(id).toLowerCase());
  if (ids.length === 0 || ids.length > MAX_EVALUATED || ids.some((id) => id === '' || id.length > ID_MAX)) {
    throw invalid('validation_failed', `subscriberIds must hold 1 to ${MAX_EVALUATED} ids of at most ${ID_MAX} characters`, [{ path: 'subscriberIds', problem: `1..${MAX_EVALUATED} ids required` }]);
  }
  await deps.awaitProjection?.();
  const segment = await loadSegment(deps, accountId, String(req.segmentId ?? '').toLowerCase());
  const { trueFilter, falseFilter } = await compileFor(deps, accountId, segment.expression);
  const { contacts } = repositoriesOf(deps, accountId);
  const named = { accountId, _id: { $in: [...new Set(ids)] } };
  const idsOf = async (filter?: Filter) => new Set((await contacts.find(filter ? { ...named, $and: [filter] } : named, { projection: { _id: 1 } })).map((c) => c._id));
  const [found, trues, falses] = await Promise.all([idsOf(), idsOf(trueFilter), idsOf(falseFilter)]);
  return ids.map((id) => (!found.has(id) ? 'FALSE' : trues.has(id) ? 'TRUE' : falses.has(id) ? 'FALSE' : 'UNKNOWN'));
}
