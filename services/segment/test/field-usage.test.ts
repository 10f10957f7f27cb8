import { commonV1 } from '@mailer/proto';
import type { SegmentExpression } from '../src/domain/expression';
import { conditionsOnField, segmentsUsingField } from '../src/domain/field-usage';
import { usageOf } from '../src/handlers/field-usage';
import type { SegmentDoc } from '../src/store/segments';

const F = '0b6c1f4e-8a51-4c33-9d7e-2f1a3b4c5d6e';
const G = '7d0e2c91-3b7a-4f21-8c55-6e4d3c2b1a09';
const onField = (fieldId: string) => ({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId }, operator: 'NUMBER_GREATER_THAN', operand: { kind: 'NUMBER', number: 1 } });
const firstName = { subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'IS_EMPTY', operand: { kind: 'NONE' } };
const inSegment = (segmentId: string) => ({ subjectType: 'SEGMENT', fieldRef: null, operator: 'NOT_CONTAINED_IN', operand: { kind: 'SEGMENT', segmentId } });
const expr = (...groups: unknown[][]) => ({ conditionGroups: groups.map((conditions) => ({ conditions })) }) as unknown as SegmentExpression;
const seg = (id: string, expression: SegmentExpression): SegmentDoc => ({ _id: id, accountId: 'acc', name: `segment ${id}`, expression, references: [], createdAt: new Date(0), updatedAt: new Date(0) });

describe('segment field usages', () => {
  it('finds conditions on the field in every group, case-insensitively, ignoring built-ins and other fields', () => {
    expect(conditionsOnField(expr([firstName], [onField(G), onField(F.toUpperCase())], [onField(F)]), F)).toEqual(['conditionGroups[1].conditions[1]', 'conditionGroups[2].conditions[0]']);
    expect(conditionsOnField(expr([firstName, onField(G)]), F)).toEqual([]);
  });

  it('direct users block deletion; segments reaching them through references (any depth) are warnings', () => {
    const all = [seg('a', expr([onField(F)])), seg('b', expr([inSegment('a')])), seg('c', expr([firstName], [inSegment('b')])), seg('d', expr([onField(G)])), seg('e', expr([inSegment('d'), inSegment('missing')]))];
    const uses = segmentsUsingField(all, F);
    expect(uses.map((u) => [u.segment._id, u.direct, u.via.map((v) => v._id)])).toEqual([
      ['a', ['conditionGroups[0].conditions[0]'], []],
      ['b', [], ['a']],
      ['c', [], ['a']],
    ]);
    const [direct, indirect] = uses.map(usageOf);
    expect(direct).toMatchObject({ category: commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_SEGMENT, effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_WARNING, permanentDeleteBlocking: true, artifactId: 'a', link: '/segments/a' });
    expect(indirect).toMatchObject({ effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_WARNING, permanentDeleteBlocking: false, artifactId: 'b' });
  });

  it('a reference cycle (never saved, but stored data is not trusted) terminates', () => {
    const all = [seg('a', expr([inSegment('b')])), seg('b', expr([inSegment('a')]))];
    expect(segmentsUsingField(all, F)).toEqual([]);
  });
});
