import { purchaseSourceParameters, purchaseSourcePaths, purchaseSourceSchemas } from './purchase-sources';
import { segmentParameters, segmentPaths, segmentSchemas } from './segments';

export { SEGMENT_OPERAND_KINDS, SEGMENT_OPERATORS, SEGMENT_SUBJECT_TYPES, SEGMENT_VALIDATION_ERROR_IDS } from './shared';

/**
 * The segment domain of the OpenAPI document: saved segments, their counts and previews (the API contract
 * "Segments and purchases", served by the segment service). The expression schema mirrors the
 * specification's SegmentExpression; the gateway checks shapes, types and vocabularies, the service
 * checks meaning (operator / subject / operand combinations, ids of the account, cycles) and
 * answers the `segment_*` errorIds.
 */
export const segmentDomainTags = [
  { name: 'Segments', description: 'Saved segments: boolean expressions over subscriber fields, tags, topics, other segments and purchases.' },
  { name: 'Purchases', description: 'Purchase sources (shops) and their orders, which PURCHASES conditions of segments evaluate.' },
];

export const segmentDomainPaths = { ...segmentPaths, ...purchaseSourcePaths };
export const segmentDomainParameters = { ...segmentParameters, ...purchaseSourceParameters };
export const segmentDomainSchemas = { ...segmentSchemas, ...purchaseSourceSchemas };
