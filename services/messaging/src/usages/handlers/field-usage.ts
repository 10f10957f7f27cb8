// mailer.common.v1.FieldUsageService of the messaging service: asked by the subscriber service
// whenever it builds a FieldUsageReport (archive, permanent delete, GET /fields/{fieldId}/usage).
import { accountOf, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { listFieldUsages } from '../app/list-field-usages';
import type { AutomationRepository } from '../../automations/store/automations';

const Categories = protoEnum(commonV1.FieldUsageCategory, 'FIELD_USAGE_CATEGORY_');
const Effects = protoEnum(commonV1.FieldUsageEffect, 'FIELD_USAGE_EFFECT_');

export function fieldUsageHandlers(deps: { automations: AutomationRepository }): AsyncHandlers<commonV1.FieldUsageServiceServer> {
  return {
    async listFieldUsages(req) {
      const automationUsages = await listFieldUsages(deps, { accountId: accountOf(req), fieldId: req.fieldId ?? '' });
      return { usages: automationUsages.map((u) => ({ ...u, category: Categories.toProto(u.category), effect: Effects.toProto(u.effect) })) };
    },
  };
}
