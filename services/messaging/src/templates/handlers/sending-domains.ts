// SendingDomainService: gRPC <-> use cases (app/sending-domains.ts), one use case per RPC.
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { sendingDomainsV1 } from '@mailer/proto';
import {
  createSendingDomain,
  deleteSendingDomain,
  getSendingDomain,
  listSendingDomains,
  recordsOf,
  verifySendingDomain,
  type DomainPolicy,
  type SendingDomainDeps,
} from '../app/sending-domains';
import type { SendingDomainDoc } from '../store/sending-domains';

const Statuses = protoEnum(sendingDomainsV1.SendingDomainStatus, 'SENDING_DOMAIN_STATUS_');
const Purposes = protoEnum(sendingDomainsV1.DnsRecordPurpose, 'DNS_RECORD_PURPOSE_');
const Uses = protoEnum(sendingDomainsV1.DomainUse, 'DOMAIN_USE_');

export function sendingDomainToProto(d: SendingDomainDoc): sendingDomainsV1.SendingDomain {
  return {
    domain: d.domain,
    status: Statuses.toProto(d.status),
    records: recordsOf(d).map((r) => ({ purpose: Purposes.toProto(r.purpose), type: r.type, name: r.name, value: r.value })),
    problems: d.problems,
    verifiedAt: d.verifiedAt?.toISOString(),
    createdAt: d.createdAt.toISOString(),
  };
}

export function sendingDomainHandlers(deps: SendingDomainDeps & { policy: DomainPolicy }): AsyncHandlers<sendingDomainsV1.SendingDomainServiceServer> {
  return {
    listSendingDomains: async (req) => ({ items: (await listSendingDomains(deps, accountOf(req))).map(sendingDomainToProto) }),
    createSendingDomain: async (req) => ({ sendingDomain: sendingDomainToProto(await createSendingDomain(deps, accountOf(req), req.domain)) }),
    getSendingDomain: async (req) => ({ sendingDomain: sendingDomainToProto(await getSendingDomain(deps, accountOf(req), req.domain)) }),
    deleteSendingDomain: async (req) => {
      await deleteSendingDomain(deps, accountOf(req), req.domain);
      return {};
    },
    verifySendingDomain: async (req) => ({ sendingDomain: sendingDomainToProto(await verifySendingDomain(deps, accountOf(req), req.domain)) }),
    requireVerifiedDomain: async (req) => {
      const use = Uses.tryFromProto(req.use);
      if (!use) throw invalid('validation_failed', 'use must be SENDER or PAGE', [{ path: 'use', problem: 'required' }]);
      await deps.policy.requireVerified(accountOf(req), req.domain ?? '', use, use === 'PAGE' ? 'body.domain' : 'body.fromEmail');
      return {};
    },
  };
}
