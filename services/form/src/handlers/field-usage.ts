// mailer.common.v1.FieldUsageService of the form service: asked by the subscriber service whenever
// it builds a FieldUsageReport (archive, permanent delete, GET /fields/{fieldId}/usage).
import { accountOf, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { listFieldUsages } from '../app/list-field-usages';
import type { FormRepository } from '../store/forms';

const Categories = protoEnum(commonV1.FieldUsageCategory, 'FIELD_USAGE_CATEGORY_');
const Effects = protoEnum(commonV1.FieldUsageEffect, 'FIELD_USAGE_EFFECT_');
const ID_MAX = 100;

export function fieldUsageHandlers(deps: { forms: FormRepository }): AsyncHandlers<commonV1.FieldUsageServiceServer> {
  return {
    async listFieldUsages(req) {
      const fieldId = req.fieldId ?? '';
      if (fieldId.length > ID_MAX) return { usages: [] }; // no field has such an id
      const usages = await listFieldUsages(deps, { accountId: accountOf(req), fieldId });
      return { usages: usages.map((u) => ({ ...u, category: Categories.toProto(u.category), effect: Effects.toProto(u.effect) })) };
    },
  };
}
