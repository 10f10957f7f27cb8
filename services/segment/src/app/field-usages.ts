// Use case of mailer.common.v1.FieldUsageService.ListFieldUsages (asked by the subscriber service):
// the account's saved segments that use a subscriber field (domain/field-usage.ts).
import { segmentsUsingField, type SegmentFieldUse } from '../domain/field-usage';
import type { Collection } from '@mailer/store';
import { segmentsOf, type SegmentDoc } from '../store/segments';

const ID_MAX = 100;

export async function listFieldUsages(deps: { segments: Collection<SegmentDoc> }, accountId: string, rawFieldId: string): Promise<SegmentFieldUse[]> {
  const fieldId = (rawFieldId ?? '').toLowerCase();
  if (fieldId === '' || fieldId.length > ID_MAX) return [];
  return segmentsUsingField(await segmentsOf(deps.segments, accountId).listByName(), fieldId);
}
