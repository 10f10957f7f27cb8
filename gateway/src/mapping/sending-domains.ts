import { protoEnum } from '@mailer/kit';
import { sendingDomainsV1 } from '@mailer/proto';

// Sending domains: messaging service messages -> API JSON (an absent verifiedAt is answered as null).

export const SendingDomainStatuses = protoEnum(sendingDomainsV1.SendingDomainStatus, 'SENDING_DOMAIN_STATUS_');
export const DnsRecordPurposes = protoEnum(sendingDomainsV1.DnsRecordPurpose, 'DNS_RECORD_PURPOSE_');

export const sendingDomainJson = (d: sendingDomainsV1.SendingDomain | undefined) => ({
  domain: d!.domain,
  status: SendingDomainStatuses.fromProto(d!.status),
  records: d!.records.map((r) => ({ purpose: DnsRecordPurposes.fromProto(r.purpose), type: r.type, name: r.name, value: r.value })),
  problems: d!.problems,
  verifiedAt: d!.verifiedAt ?? null,
  createdAt: d!.createdAt,
});
