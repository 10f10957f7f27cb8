// FormService: gRPC <-> use cases (app/forms.ts), one use case per RPC.
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { formV1, subscriberV1 } from '@mailer/proto';
import * as uc from '../app/forms';
import { publicUrlOf, type FieldRef, type Form, type FormField } from '../domain/form';
import type { FormFieldRequest, FormRequest } from '../domain/form-request';

const FormTypes = protoEnum(formV1.FormType, 'FORM_TYPE_');
const FormStatuses = protoEnum(formV1.FormStatus, 'FORM_STATUS_');
const PageStatuses = protoEnum(formV1.LandingPageStatus, 'LANDING_PAGE_STATUS_');
const Controls = protoEnum(formV1.FormInputControl, 'FORM_INPUT_CONTROL_');
const FieldTypes = protoEnum(subscriberV1.FieldType, 'FIELD_TYPE_');
const BuiltIns = protoEnum(subscriberV1.BuiltInField, 'BUILT_IN_FIELD_');

/** Longest id or name a request may carry: anything longer names nothing that exists. */
const ID_MAX = 100;

const refToProto = (ref: FieldRef): subscriberV1.FieldRef =>
  ref.type === 'BUILT_IN' ? { ref: { $case: 'builtInField', value: BuiltIns.toProto(ref.builtInField) } } : { ref: { $case: 'fieldId', value: ref.fieldId } };

const fieldToProto = (f: FormField): formV1.FormField => ({
  fieldRef: refToProto(f.fieldRef),
  personalizationTagName: f.personalizationTagName,
  label: f.label,
  placeholder: f.placeholder,
  isRequired: f.isRequired,
  position: f.position,
  fieldType: FieldTypes.toProto(f.fieldType),
  inputControl: Controls.toProto(f.inputControl),
  optionValues: f.optionValues,
});

export function formToProto(form: Form, publicBaseUrl: string): formV1.Form {
  return {
    id: form.id,
    name: form.name,
    type: FormTypes.toProto(form.type),
    status: FormStatuses.toProto(form.status),
    landingPageStatus: PageStatuses.toProto(form.landingPageStatus),
    publicUrl: publicUrlOf(form, publicBaseUrl) ?? undefined,
    lastPublishedAt: form.lastPublishedAt?.toISOString(),
    routePath: form.routePath ?? undefined,
    domain: form.domain ?? undefined,
    inputFields: form.inputFields.map(fieldToProto),
    topicIds: form.topicIds,
    doubleOptIn: form.doubleOptIn,
    senderProfileId: form.senderProfileId ?? undefined,
    confirmationTemplateName: form.confirmationTemplateName ?? undefined,
    allowedOrigins: form.allowedOrigins,
    createdAt: form.createdAt.toISOString(),
    updatedAt: form.updatedAt.toISOString(),
  };
}

function refFromProto(ref: subscriberV1.FieldRef | undefined, path: string): FieldRef {
  const r = ref?.ref;
  if (r?.$case === 'fieldId' && r.value.length > 0 && r.value.length <= ID_MAX) return { type: 'CUSTOM', fieldId: r.value.toLowerCase() };
  const builtIn = r?.$case === 'builtInField' ? BuiltIns.tryFromProto(r.value) : undefined;
  if (builtIn) return { type: 'BUILT_IN', builtInField: builtIn };
  throw invalid('validation_failed', `${path} must name a built-in field or a custom field id`, [{ path, problem: 'a BUILT_IN or CUSTOM field reference' }]);
}

function fieldInput(f: formV1.FormFieldInput, i: number): FormFieldRequest {
  return {
    fieldRef: refFromProto(f.fieldRef, `body.inputFields[${i}].fieldRef`),
    label: f.label ?? null,
    placeholder: f.placeholder ?? null,
    isRequired: f.isRequired,
    inputControl: Controls.tryFromProto(f.inputControl) ?? null,
  };
}

export function formInput(f: formV1.FormInput | undefined): FormRequest {
  if (!f) throw invalid('validation_failed', 'form is required', [{ path: 'body', problem: 'required' }]);
  const type = FormTypes.tryFromProto(f.type);
  if (!type) throw invalid('validation_failed', `type must be one of ${FormTypes.names.join(', ')}`, [{ path: 'body.type', problem: 'required' }]);
  const tooLong = (v: string | undefined, path: string) => {
    if (v !== undefined && v.length > ID_MAX) throw invalid('validation_failed', `${path} is too long`, [{ path, problem: `at most ${ID_MAX} characters` }]);
  };
  tooLong(f.senderProfileId, 'body.senderProfileId');
  tooLong(f.confirmationTemplateName, 'body.confirmationTemplateName');
  f.topicIds.forEach((id, i) => tooLong(id, `body.topicIds[${i}]`));
  return {
    name: f.name,
    type,
    inputFields: f.inputFields.map(fieldInput),
    topicIds: f.topicIds,
    doubleOptIn: f.doubleOptIn ?? null,
    senderProfileId: f.senderProfileId ?? null,
    confirmationTemplateName: f.confirmationTemplateName ?? null,
    routePath: f.routePath ?? null,
    domain: f.domain ?? null,
    allowedOrigins: f.allowedOrigins,
  };
}

/** Ids are compared lowercase (paths accept UUIDs in any case); an over-long one names no form. */
const idOf = (id: string | undefined) => (id ?? '').slice(0, ID_MAX + 1).toLowerCase();

export function formHandlers(deps: uc.FormDeps): AsyncHandlers<formV1.FormServiceServer> {
  const out = (form: Form) => ({ form: formToProto(form, deps.publicBaseUrl) });
  return {
    describe: async () => ({ service: 'form', protoPackage: formV1.protobufPackage }),
    listForms: async (req) => ({ items: (await uc.listForms(deps, accountOf(req))).map((f) => formToProto(f, deps.publicBaseUrl)) }),
    getForm: async (req) => out(await uc.getForm(deps, accountOf(req), idOf(req.formId))),
    createForm: async (req) => out(await uc.createForm(deps, accountOf(req), formInput(req.form))),
    updateForm: async (req) => out(await uc.updateForm(deps, accountOf(req), idOf(req.formId), formInput(req.form))),
    deleteForm: async (req) => {
      await uc.deleteForm(deps, accountOf(req), idOf(req.formId));
      return {};
    },
    activateForm: async (req) => out(await uc.activateForm(deps, accountOf(req), idOf(req.formId))),
    deactivateForm: async (req) => out(await uc.deactivateForm(deps, accountOf(req), idOf(req.formId))),
    publishForm: async (req) => out(await uc.publishForm(deps, accountOf(req), idOf(req.formId))),
    unpublishForm: async (req) => out(await uc.unpublishForm(deps, accountOf(req), idOf(req.formId))),
    getFormEmbedding: async (req) => out(await uc.getFormEmbedding(deps, accountOf(req), idOf(req.formId))),
    countFormsUsing: async (req) => {
      const ref = req.ref;
      // names nothing a form could name (a domain name has at most 253 characters)
      if (!ref || ref.value === '' || ref.value.length > (ref.$case === 'domain' ? 253 : ID_MAX)) return { count: 0, forms: [] };
      const by =
        ref.$case === 'senderProfileId' ? { senderProfileId: ref.value.toLowerCase() } : ref.$case === 'templateName' ? { templateName: ref.value } : { domain: ref.value.toLowerCase() };
      const { count, forms } = await uc.formsUsing(deps, accountOf(req), by);
      return { count, forms };
    },
  };
}
