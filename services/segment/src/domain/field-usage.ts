// Which of an account's saved segments use a subscriber field (pure; app/field-usages.ts loads the
// segments, handlers/field-usage.ts answers mailer.common.v1.FieldUsageService, asked by the
// subscriber service whenever it builds a FieldUsageReport: archive, permanent delete,
// GET /fields/{fieldId}/usage).
//
// Decisions:
// - A segment with a FIELD condition on the field (`fieldRef {type: CUSTOM, fieldId}`, in any
//   group) is a *direct* use. It reads the field and never writes it, so it is not a "write usage
//   that blocks archival": its effect is WARNING (an archived field keeps its values, and a saved
//   condition on an archived field keeps evaluating; only new conditions may not name it). It does
//   block a permanent delete (`permanentDeleteBlocking: true`): deleting the field erases its values
//   everywhere, which would silently turn the condition UNKNOWN for every contact and change who the
//   segment matches. The segment has to be changed (or deleted) first.
// - A segment that only references such a segment (CONTAINED_IN / NOT_CONTAINED_IN, at any depth)
//   is an *indirect* use: it is listed too, as a WARNING that does not block deletion by itself, so
//   the report shows every segment whose members would change. Blocking it as well would add nothing:
//   the direct user it goes through already blocks, and editing that one is what clears the way.
// - Built-in fields (EMAIL, FIRST_NAME) are never archived or deleted and have no field id here.
import type { SegmentExpression } from './expression';
import type { SegmentDoc } from '../store/segments';

/** Positions (`conditionGroups[g].conditions[c]`) of the expression's FIELD conditions on the field. */
export function conditionsOnField(expression: SegmentExpression, fieldId: string): string[] {
  const at: string[] = [];
  expression.conditionGroups.forEach((g, gi) =>
    g.conditions.forEach((c, ci) => {
      const ref = c.subjectType === 'FIELD' ? c.fieldRef : null;
      if (ref && ref.type === 'CUSTOM' && ref.fieldId.toLowerCase() === fieldId) at.push(`conditionGroups[${gi}].conditions[${ci}]`);
    }),
  );
  return at;
}

/** Segment ids the expression references directly (CONTAINED_IN / NOT_CONTAINED_IN). */
function referenced(expression: SegmentExpression): string[] {
  return expression.conditionGroups.flatMap((g) => g.conditions.flatMap((c) => (c.subjectType === 'SEGMENT' && c.operand.segmentId ? [c.operand.segmentId] : [])));
}

export interface SegmentFieldUse {
  segment: SegmentDoc;
  /** Direct: the conditions' positions. Indirect: the direct user(s) it goes through. */
  direct: string[];
  via: SegmentDoc[];
}

/** The account's segments using the field, directly or through referenced segments (pure). */
export function segmentsUsingField(all: readonly SegmentDoc[], fieldId: string): SegmentFieldUse[] {
  const byId = new Map(all.map((s) => [s._id, s]));
  const direct = new Map(all.map((s) => [s._id, conditionsOnField(s.expression, fieldId)] as const));
  const uses: SegmentFieldUse[] = [];
  for (const s of all) {
    const positions = direct.get(s._id) ?? [];
    if (positions.length > 0) {
      uses.push({ segment: s, direct: positions, via: [] });
      continue;
    }
    // Walk the references (saved references are acyclic; `seen` guards anyway).
    const via = new Map<string, SegmentDoc>();
    const seen = new Set<string>([s._id]);
    const stack = referenced(s.expression);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const r = byId.get(id);
      if (!r) continue;
      if ((direct.get(id) ?? []).length > 0) via.set(id, r);
      stack.push(...referenced(r.expression));
    }
    if (via.size > 0) uses.push({ segment: s, direct: [], via: [...via.values()] });
  }
  return uses;
}

