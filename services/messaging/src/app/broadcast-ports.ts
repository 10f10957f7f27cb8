// What the broadcast use cases need from the other services, as interfaces (clients/ adapts them).
import type { FieldInfo } from '../domain/automation';
import type { AudienceRecipient } from './audience-send';

/** A reader of the account and the first audience rule of the subscriber service it fails (null: a recipient). */
export interface AudienceReader extends AudienceRecipient {
  exclusion: 'NOT_ACTIVE' | 'NOT_IN_TOPIC' | 'OPTED_OUT' | 'NOT_IN_SEGMENT' | 'SEGMENT_UNKNOWN' | null;
}

export interface AudienceRules {
  segmentId: string | null;
  topicId: string | null;
}

/** The subscriber service's audience of a broadcast (AudienceService with_excluded, CheckAudience). */
export interface BroadcastAudience {
  /** Every reader of the account after the cursor, in id order, each classified; `next` '' at the end. */
  readers(accountId: string, q: AudienceRules & { after: string; pageSize: number }): Promise<{ readers: AudienceReader[]; next: string }>;
  /** The named readers the account still has, classified now (a reader it no longer has is left out). */
  check(accountId: string, q: AudienceRules & { subscriberIds: string[] }): Promise<AudienceReader[]>;
}

/** Ids a broadcast names, checked against the services that own them. */
export interface BroadcastCatalog {
  segmentExists(accountId: string, segmentId: string): Promise<boolean>;
  topicIds(accountId: string): Promise<Set<string>>;
  /** The account's custom fields (a send window's timeZoneField must be a TEXT one). */
  customFields(accountId: string): Promise<Array<Pick<FieldInfo, 'type' | 'active' | 'personalizationTagName'>>>;
}
