// mailer.common.v1.FieldUsageService of the rss service: asked by the subscriber service whenever it
// builds a FieldUsageReport (archive, permanent delete, GET /fields/{fieldId}/usage).
import { accountOf, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { listFieldUsages } from '../app/list-field-usages';
import type { NewsletterRepository } from '../store/newsletters';

const Categories = protoEnum(commonV1.FieldUsageCategory, 'FIELD_USAGE_CATEGORY_');
const Effects = protoEnum(commonV1.FieldUsageEffect, 'FIELD_USAGE_EFFECT_');

export function fieldUsageHandlers(deps: { newsletters: NewsletterRepository }): AsyncHandlers<commonV1.FieldUsageServiceServer> {
  return {
    async listFieldUsages(req) {
      const usages = await listFieldUsages(deps, { accountId: accountOf(req), personalizationTagName: req.personalizationTagName ?? '' });
      return { usages: usages.map((u) => ({ ...u, category: Categories.toProto(u.category), effect: Effects.toProto(u.effect) })) };
    },
  };
}
