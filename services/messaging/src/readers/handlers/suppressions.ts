// SuppressionService RPCs: each parses its request and calls its use case in app/suppressions.ts.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import { suppressionsV1 } from '@mailer/proto';
import { addManualSuppression, getSuppression, listSuppressions, removeSuppression, type SuppressionDeps } from '../app/suppressions';
import { SUPPRESSION_REASONS, type SuppressionDoc, type SuppressionListReason } from '../store/suppressions';

const R = suppressionsV1.SuppressionReason;
const PREFIX = 'SUPPRESSION_REASON_';

function reasonFromProto(r: suppressionsV1.SuppressionReason): SuppressionListReason | undefined {
  if (r === R.SUPPRESSION_REASON_UNSPECIFIED) return undefined;
  const name = (R[r] ?? '').slice(PREFIX.length) as SuppressionListReason;
  if (!SUPPRESSION_REASONS.includes(name)) throw invalid('validation_failed', `unknown suppression reason ${r}`, [{ path: 'reason', problem: 'unknown reason' }]);
  return name;
}

const reasonToProto = (r: SuppressionListReason): suppressionsV1.SuppressionReason => R[`${PREFIX}${r}` as keyof typeof R];

export const suppressionToProto = (s: SuppressionDoc): suppressionsV1.Suppression => ({
  email: s.email,
  reason: reasonToProto(s.reason),
  createdAt: s.createdAt.toISOString(),
  messageId: s.messageId ?? undefined,
});

export function suppressionHandlers(deps: SuppressionDeps): AsyncHandlers<suppressionsV1.SuppressionServiceServer> {
  return {
    async listSuppressions(req) {
      const accountId = accountOf(req);
      const page = await listSuppressions(deps, { accountId, email: req.email, reason: reasonFromProto(req.reason), pageNumber: req.pageNumber, pageSize: req.pageSize });
      return { items: page.items.map(suppressionToProto), pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: String(page.totalItems), totalPages: page.totalPages };
    },
    async addSuppression(req) {
      const { suppression, created } = await addManualSuppression(deps, { accountId: accountOf(req), email: req.email });
      return { suppression: suppressionToProto(suppression), created };
    },
    async getSuppression(req) {
      const found = await getSuppression(deps, { accountId: accountOf(req), email: req.email });
      return found ? { found: true, reason: reasonToProto(found.reason) } : { found: false, reason: R.SUPPRESSION_REASON_UNSPECIFIED };
    },
    async deleteSuppression(req) {
      await removeSuppression(deps, { accountId: accountOf(req), email: req.email });
      return {};
    },
  };
}
