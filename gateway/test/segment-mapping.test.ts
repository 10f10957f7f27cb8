import { expressionJson, expressionToProto, segmentPreviewJson } from '../src/mapping/segments';

describe('segment mapping', () => {
  it('JSON null and absence both become absent proto members; ids are lowercased', () => {
    const proto = expressionToProto({
      conditionGroups: [
        {
          conditions: [
            { subjectType: 'TAGS', fieldRef: null, operator: 'OPTION_CONTAINS_ANY', operand: { kind: 'OPTIONS', optionIds: ['AB1C0000-0000-4000-8000-000000000000'], text: null } },
            { subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL', fieldId: null }, operator: 'IS_EMPTY', operand: { kind: 'NONE' } },
          ],
        },
      ],
    });
    const [tags, field] = proto.conditionGroups[0].conditions;
    expect(tags).toEqual({ subjectType: 'TAGS', fieldRef: undefined, operator: 'OPTION_CONTAINS_ANY', operand: expect.objectContaining({ kind: 'OPTIONS', optionIds: ['ab1c0000-0000-4000-8000-000000000000'], text: undefined }) });
    expect(field.fieldRef).toEqual({ type: 'BUILT_IN', builtInField: 'EMAIL', fieldId: undefined });
    expect(field.operand?.optionIds).toEqual([]);
  });

  it('answers only the operand members that are set, fieldRef null outside FIELD conditions, counts as numbers', () => {
    expect(
      expressionJson({
        conditionGroups: [
          { conditions: [{ subjectType: 'SEGMENT', fieldRef: undefined, operator: 'CONTAINED_IN', operand: { kind: 'SEGMENT', optionIds: [], segmentId: 'x' } }] },
        ],
      }),
    ).toEqual({ conditionGroups: [{ conditions: [{ subjectType: 'SEGMENT', fieldRef: null, operator: 'CONTAINED_IN', operand: { kind: 'SEGMENT', segmentId: 'x' } }] }] });
    expect(segmentPreviewJson({ matchingCount: '3', unknownCount: '', reachableCount: '1', contacts: [], captureScopes: [] })).toEqual({
      matchingCount: 3,
      unknownCount: 0,
      reachableCount: 1,
      contacts: [],
      captureScopes: [],
    });
  });
});
