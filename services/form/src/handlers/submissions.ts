// SubmissionService: gRPC <-> the submissions log (GET /forms/{formId}/submissions).
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { submissionsV1 } from '@mailer/proto';
import { formNotFound } from '../app/forms';
import type { FormRepository } from '../store/forms';
import type { SubmissionDoc, SubmissionRepository } from '../store/submissions';

export const Decisions = protoEnum(submissionsV1.FormDecision, 'FORM_DECISION_');
const MAX_PAGE_SIZE = 1000;
const ID_MAX = 100;

export function submissionToProto(s: SubmissionDoc): submissionsV1.Submission {
  return {
    submissionId: s._id,
    email: s.email,
    subscriberId: s.subscriberId ?? undefined,
    decision: Decisions.toProtoOrUnspecified(s.decision ?? undefined),
    submittedAt: s.submittedAt.toISOString(),
    consent: s.consent ? { text: s.consent.text, givenAt: s.consent.givenAt.toISOString() } : undefined,
    processedAt: s.processedAt?.toISOString(),
    valuesJson: JSON.stringify(s.values ?? {}),
  };
}

export function submissionHandlers(deps: { forms: FormRepository; submissions: SubmissionRepository }): AsyncHandlers<submissionsV1.SubmissionServiceServer> {
  return {
    async listSubmissions(req) {
      const accountId = accountOf(req);
      const pageNumber = req.pageNumber || 1;
      const pageSize = req.pageSize || 50;
      if (pageNumber < 1 || pageSize < 1 || pageSize > MAX_PAGE_SIZE || !Number.isSafeInteger((pageNumber - 1) * pageSize)) {
        throw invalid('validation_failed', `pageNumber must be >= 1 and pageSize 1..${MAX_PAGE_SIZE}`);
      }
      if (req.formId.length > ID_MAX || !(await deps.forms.get(accountId, req.formId))) throw formNotFound(req.formId);
      const decision = Decisions.tryFromProto(req.decision);
      const { items, totalItems } = await deps.submissions.page(accountId, req.formId, { decision, pageNumber, pageSize });
      return { items: items.map(submissionToProto), pageNumber, pageSize, totalItems: String(totalItems), totalPages: Math.ceil(totalItems / pageSize) };
    },
  };
}
