// A form's submissions log (form service's SubmissionService) between REST and gRPC.
import { protoEnum } from '@mailer/kit';
import { submissionsV1 } from '@mailer/proto';
import type { QueryOf } from '../openapi/types';
import { int64 } from './numbers';

export const FormDecisions = protoEnum(submissionsV1.FormDecision, 'FORM_DECISION_');

export const listSubmissionsToProto = (accountId: string, formId: string, q: QueryOf<'listFormSubmissions'>): submissionsV1.ListSubmissionsRequest => ({
  accountId,
  formId,
  decision: FormDecisions.toProtoOrUnspecified(q.decision),
  pageNumber: q.pageNumber,
  pageSize: q.pageSize,
});

export const submissionJson = (s: submissionsV1.Submission) => ({
  submissionId: s.submissionId,
  email: s.email,
  subscriberId: s.subscriberId ?? null,
  // null: not decided yet (processedAt null), or a single opt-in form.
  decision: FormDecisions.tryFromProto(s.decision) ?? null,
  submittedAt: s.submittedAt,
  processedAt: s.processedAt ?? null,
  consent: s.consent ? { text: s.consent.text, givenAt: s.consent.givenAt } : null,
  values: JSON.parse(s.valuesJson || '{}') as Record<string, unknown>,
});

export const submissionPageJson = (page: submissionsV1.ListSubmissionsResponse) => ({
  items: page.items.map(submissionJson),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: int64(page.totalItems),
  totalPages: page.totalPages,
});
