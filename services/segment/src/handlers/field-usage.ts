// mailer.common.v1.FieldUsageService of the segment service: gRPC <-> domain; the use case is
// app/field-usages.ts, the rules (what is a direct or an indirect use) domain/field-usage.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import type { Collection } from '@mailer/store';
import { listFieldUsages } from '../app/field-usages';
import type { SegmentFieldUse } from '../domain/field-usage';
import type { SegmentDoc } from '../store/segments';

export function usageOf(use: SegmentFieldUse): commonV1.FieldUsage {
  const isDirect = use.direct.length > 0;
  return {
    category: commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_SEGMENT,
    area: isDirect ? `expression ${use.direct.join(', ')}` : `expression (through ${use.via.map((v) => `segment "${v.name}"`).join(', ')})`,
    artifactId: use.segment._id,
    artifactName: use.segment.name,
    status: 'SAVED',
    reason: isDirect
      ? 'a condition of the segment reads the field; deleting the field would make it UNKNOWN for every contact'
      : `the segment references ${use.via.map((v) => `"${v.name}" (${v._id})`).join(', ')}, which reads the field`,
    link: `/segments/${use.segment._id}`,
    permanentDeleteBlocking: isDirect,
    effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_WARNING,
  };
}

export function fieldUsageHandlers(deps: { segments: Collection<SegmentDoc> }): AsyncHandlers<commonV1.FieldUsageServiceServer> {
  return {
    listFieldUsages: async (req) => ({ usages: (await listFieldUsages(deps, accountOf(req), req.fieldId)).map(usageOf) }),
  };
}
