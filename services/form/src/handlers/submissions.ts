// SubmissionService: gRPC <-> the submissions log (GET /forms/{formId}/submissions, app/submissions.ts).
import { accountOf, type AsyncHandlers, pageAnswer, pageOf, protoEnum } from '@mailer/kit';
import { submissionsV1 } from '@mailer/proto';
import { listSubmissions } from '../app/submissions';
import type { FormRepository } from '../store/forms';
import type { SubmissionDoc, SubmissionRepository } from '../store/submissions';

export const Decisions = protoEnum(submissionsV1.FormDecision, 'FORM_DECISION_');

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
      const page = pageOf(req.pageNumber, req.pageSize);
      const decision = Decisions.tryFromProto(req.decision);
      const { items, totalItems } = await listSubmissions(deps, accountId, req.formId, { decision, pageNumber: page.pageNumber, pageSize: page.pageSize });
      return { items: items.map(submissionToProto), ...pageAnswer(page, totalItems) };
    },
  };
}
