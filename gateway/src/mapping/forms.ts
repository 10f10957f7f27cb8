import { protoEnum } from '@mailer/kit';
import { formV1, type subscriberV1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';
import { BuiltInFields, FieldTypes } from './enums';
import { fieldRefJson } from './subscribers';

// Signup forms: API bodies (as validated by the OpenAPI document) <-> form service messages. JSON
// `null` and absence both become an absent proto member, and an absent member is answered as `null`.

export const FormTypes = protoEnum(formV1.FormType, 'FORM_TYPE_');
export const FormStatuses = protoEnum(formV1.FormStatus, 'FORM_STATUS_');
export const LandingPageStatuses = protoEnum(formV1.LandingPageStatus, 'LANDING_PAGE_STATUS_');
export const FormInputControls = protoEnum(formV1.FormInputControl, 'FORM_INPUT_CONTROL_');

const refToProto = (ref: Schemas['FieldRef']): subscriberV1.FieldRef =>
  ref.type === 'BUILT_IN'
    ? { ref: { $case: 'builtInField', value: BuiltInFields.toProto(ref.builtInField) } }
    : { ref: { $case: 'fieldId', value: ref.fieldId.toLowerCase() } };

export const formToProto = (b: Schemas['FormRequest']): formV1.FormInput => ({
  name: b.name,
  type: FormTypes.toProto(b.type),
  inputFields: b.inputFields.map((f) => ({
    fieldRef: refToProto(f.fieldRef),
    label: f.label ?? undefined,
    placeholder: f.placeholder ?? undefined,
    isRequired: f.isRequired,
    inputControl: FormInputControls.toProtoOrUnspecified(f.inputControl ?? undefined),
  })),
  topicIds: (b.topicIds ?? []).map((id) => id.toLowerCase()),
  doubleOptIn: b.doubleOptIn ?? undefined,
  senderProfileId: b.senderProfileId?.toLowerCase() ?? undefined,
  confirmationTemplateName: b.confirmationTemplateName ?? undefined,
  routePath: b.routePath ?? undefined,
  domain: b.domain ?? undefined,
  allowedOrigins: b.allowedOrigins ?? [],
});

/** The specification types lastPublishedAt as LocalDateTime: the UTC instant without zone, to the second. */
export const localDateTime = (instant: string | undefined): string | null => (instant ? instant.slice(0, 19) : null);

const formFieldJson = (f: formV1.FormField) => ({
  fieldRef: fieldRefJson(f.fieldRef),
  personalizationTagName: f.personalizationTagName,
  label: f.label,
  placeholder: f.placeholder,
  isRequired: f.isRequired,
  position: f.position,
  fieldType: FieldTypes.fromProto(f.fieldType),
  inputControl: FormInputControls.fromProto(f.inputControl),
  optionValues: f.optionValues,
});

/** FormOverviewDto. */
export const formOverviewJson = (f: formV1.Form | undefined) => ({
  id: f!.id,
  name: f!.name,
  type: FormTypes.fromProto(f!.type),
  status: FormStatuses.fromProto(f!.status),
  publishedStatus: LandingPageStatuses.fromProto(f!.landingPageStatus),
  publicUrl: f!.publicUrl ?? null,
  lastPublishedAt: localDateTime(f!.lastPublishedAt),
  routePath: f!.routePath ?? null,
  domain: f!.domain ?? null,
});

/** Form: the overview plus the body's members and times. */
export const formJson = (f: formV1.Form | undefined) => ({
  ...formOverviewJson(f),
  inputFields: f!.inputFields.map(formFieldJson),
  topicIds: f!.topicIds,
  doubleOptIn: f!.doubleOptIn,
  senderProfileId: f!.senderProfileId ?? null,
  confirmationTemplateName: f!.confirmationTemplateName ?? null,
  allowedOrigins: f!.allowedOrigins,
  createdAt: f!.createdAt,
  updatedAt: f!.updatedAt,
});

/** FormEmbedding. */
export const formEmbeddingJson = (f: formV1.Form | undefined) => ({
  id: f!.id,
  type: FormTypes.fromProto(f!.type),
  inputFields: f!.inputFields.map(formFieldJson),
});
