import { segmentV1, subscriberV1 } from '@mailer/proto';
import { expressionJson, expressionToProto, segmentPreviewJson } from '../src/mapping/segments';

const { SegmentSubjectType: ST, SegmentOperator: OP, SegmentOperandKind: OK, SegmentFieldRefType: FR } = segmentV1;

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
    expect(tags).toEqual({
      subjectType: ST.SEGMENT_SUBJECT_TYPE_TAGS,
      fieldRef: undefined,
      operator: OP.SEGMENT_OPERATOR_OPTION_CONTAINS_ANY,
      operand: expect.objectContaining({ kind: OK.SEGMENT_OPERAND_KIND_OPTIONS, optionIds: ['ab1c0000-0000-4000-8000-000000000000'], text: undefined }) });
    expect(field.fieldRef).toEqual({ type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: subscriberV1.BuiltInField.BUILT_IN_FIELD_EMAIL, fieldId: undefined });
    expect(field.operator).toBe(OP.SEGMENT_OPERATOR_IS_EMPTY);
    expect(field.operand?.kind).toBe(OK.SEGMENT_OPERAND_KIND_NONE);
    expect(field.operand?.optionIds).toEqual([]);
  });

  it('answers only the operand members that are set, fieldRef null outside FIELD conditions, counts as numbers', () => {
    expect(
      expressionJson({
        conditionGroups: [
          {
            conditions: [
              {
                subjectType: ST.SEGMENT_SUBJECT_TYPE_SEGMENT,
                fieldRef: undefined,
                operator: OP.SEGMENT_OPERATOR_CONTAINED_IN,
                operand: { kind: OK.SEGMENT_OPERAND_KIND_SEGMENT, optionIds: [], segmentId: 'x' },
              },
            ],
          },
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

  it('answers enum values by their API names; a value without a name is a service bug (throws: 500)', () => {
    const contact = { id: 'c', email: 'e@example.org', firstName: undefined, subscriberStatus: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNCONFIRMED };
    const preview = (c: typeof contact) => segmentPreviewJson({ matchingCount: '1', unknownCount: '0', reachableCount: '0', contacts: [c], captureScopes: [] });
    expect(preview(contact).contacts).toEqual([{ id: 'c', email: 'e@example.org', firstName: null, subscriberStatus: 'UNCONFIRMED' }]);
    expect(() => preview({ ...contact, subscriberStatus: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNSPECIFIED })).toThrow();
    const custom = { subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, operator: OP.SEGMENT_OPERATOR_IS_EMPTY, operand: { kind: OK.SEGMENT_OPERAND_KIND_NONE, optionIds: [] } };
    expect(
      expressionJson({ conditionGroups: [{ conditions: [{ ...custom, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: 'f' } }] }] }).conditionGroups[0]
        .conditions[0],
    ).toEqual({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: 'f' }, operator: 'IS_EMPTY', operand: { kind: 'NONE' } });
  });
});
