// The suppression list (messaging service's SuppressionService) between REST and gRPC.
import { protoEnum } from '@mailer/kit';
import { suppressionsV1 } from '@mailer/proto';
import type { QueryOf } from '../openapi/types';
import { int64 } from './numbers';

export const SuppressionReasons = protoEnum(suppressionsV1.SuppressionReason, 'SUPPRESSION_REASON_');

export const listSuppressionsToProto = (accountId: string, q: QueryOf<'listSuppressions'>): suppressionsV1.ListSuppressionsRequest => ({
  accountId,
  email: q.email,
  reason: SuppressionReasons.toProtoOrUnspecified(q.reason),
  pageNumber: q.pageNumber,
  pageSize: q.pageSize,
});

export const suppressionJson = (s: suppressionsV1.Suppression) => ({
  email: s.email,
  reason: SuppressionReasons.fromProto(s.reason),
  createdAt: s.createdAt,
  messageId: s.messageId ?? null,
});

export const suppressionPageJson = (page: suppressionsV1.ListSuppressionsResponse) => ({
  items: page.items.map(suppressionJson),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: int64(page.totalItems),
  totalPages: page.totalPages,
});
