// Subscribers per status, as the subscriber list and a segment's member list both answer them
// (StatusCounts: int64 as text, one member per status).
export type SubscriberStatusName = 'UNCONFIRMED' | 'ACTIVE' | 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED' | 'BLOCKED';

export interface StatusCountsMessage {
  unconfirmed: string;
  active: string;
  unsubscribed: string;
  bounced: string;
  complained: string;
  blocked: string;
}

export function statusCountsToProto(counts: Record<SubscriberStatusName, number>): StatusCountsMessage {
  return {
    unconfirmed: String(counts.UNCONFIRMED),
    active: String(counts.ACTIVE),
    unsubscribed: String(counts.UNSUBSCRIBED),
    bounced: String(counts.BOUNCED),
    complained: String(counts.COMPLAINED),
    blocked: String(counts.BLOCKED),
  };
}
