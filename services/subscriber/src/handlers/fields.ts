// SubscriberService RPCs of the field catalog: each parses its request and calls its use case in app/fields.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import * as fields from '../app/fields';
import type { Deps } from '../app/deps';
import { builtInImmutable, newFieldOptions, parseFieldRef, validateFieldLabel, validatePersonalizationTagName } from '../domain/fields';
import { usageToProto } from '../clients/field-usage';
import { builtInFieldToProto, fieldToProto, fieldTypeFromProto } from './mapping';

type FieldRpcs = 'listFields' | 'addField' | 'getField' | 'updateField' | 'archiveField' | 'restoreField' | 'deleteField' | 'getFieldUsage' | 'listFieldForms';

export function fieldHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, FieldRpcs> {
  const refOf = (req: { accountId: string; fieldId: string }) => ({ accountId: accountOf(req), ref: parseFieldRef(req.fieldId) });
  return {
    async listFields(req) {
      const { builtIn, custom } = await fields.listFields(deps, { accountId: accountOf(req), includeArchived: req.includeArchived });
      return { fields: [...builtIn.map(builtInFieldToProto), ...custom.map(fieldToProto)] };
    },

    async addField(req) {
      const accountId = accountOf(req);
      const label = validateFieldLabel(req.label);
      const fieldType = fieldTypeFromProto(req.fieldType);
      const personalizationTagName = req.personalizationTagName ? validatePersonalizationTagName(req.personalizationTagName) : undefined;
      const options = newFieldOptions(fieldType, req.options);
      const field = await fields.addField(deps, { accountId, label, fieldType, personalizationTagName, required: req.required, internal: req.internal, options });
      return { field: fieldToProto(field) };
    },

    async getField(req) {
      const found = await fields.getField(deps, refOf(req));
      return { field: 'builtIn' in found ? builtInFieldToProto(found.builtIn) : fieldToProto(found.field) };
    },

    async updateField(req) {
      const accountId = accountOf(req);
      const ref = parseFieldRef(req.fieldId);
      if ('builtIn' in ref) throw builtInImmutable(ref.builtIn);
      const label = req.label === undefined ? undefined : validateFieldLabel(req.label);
      const field = await fields.updateField(deps, {
        accountId,
        fieldId: ref.id,
        label,
        required: req.required,
        internal: req.internal,
        options: req.optionsGiven ? req.options.map((o) => ({ id: o.id, label: o.label, position: o.position, active: o.active })) : undefined,
        position: req.position,
      });
      return { field: fieldToProto(field) };
    },

    async archiveField(req) {
      return { field: fieldToProto(await fields.archiveField(deps, refOf(req))) };
    },

    async restoreField(req) {
      return { field: fieldToProto(await fields.restoreField(deps, refOf(req))) };
    },

    async deleteField(req) {
      await fields.deleteField(deps, refOf(req));
      return {};
    },

    async getFieldUsage(req) {
      const { field, usage, subscriberValueCount } = await fields.getFieldUsage(deps, refOf(req));
      const list = (xs: typeof usage.blockingUsages) => xs.map(usageToProto);
      return {
        report: {
          fieldId: field.id,
          fieldLabel: field.label,
          personalizationTagName: field.personalizationTagName,
          fieldType: fieldToProto(field).fieldType,
          subscriberValueCount: String(subscriberValueCount),
          archiveBlocked: usage.archiveBlocked,
          permanentDeleteBlocked: usage.permanentDeleteBlocked,
          blockingUsages: list(usage.blockingUsages),
          warningUsages: list(usage.warningUsages),
          contentMergeTagUsages: list(usage.contentMergeTagUsages),
          permanentDeleteBlockingUsages: list(usage.permanentDeleteBlockingUsages),
          externalHints: list(usage.externalHints),
          sources: usage.sources.map((s) => ({ service: s.service, answered: s.answered, error: s.error })),
        },
      };
    },

    async listFieldForms(req) {
      return { forms: await fields.listFieldForms(deps, refOf(req)) };
    },
  };
}
