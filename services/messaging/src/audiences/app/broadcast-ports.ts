// What the broadcast use cases are given: the other services as interfaces (clients/ adapts them),
// the stores, the settings of the send.
import type { Logger } from '@mailer/kit';
import type { OutboxRepository } from '@mailer/nats';
import type { Collection, Store } from '@mailer/store';
import type { FieldInfo } from '../../automations/domain/automation';
import type { RecipientCollections } from '../store/broadcast-recipients';
import type { BroadcastRepository } from '../store/broadcasts';
import type { MessageCollections } from '../../mail/store/messages';
import type { SuppressionDoc } from '../../readers/store/suppressions';
import type { RecipientLookup } from '../../mail/app/accept-message';
import type { AudienceRecipient } from './audience-send';
import type { PublicLinks } from '../../readers/app/public-links';
import type { DomainPolicy } from '../../templates/app/sending-domains';

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

/** How the send proceeds (settings BROADCAST_*). */
export interface SendSettings {
  /** Readers per audience page and recipients per queueing step: one store transaction each. */
  pageSize: number;
  /** The send poller's lease on a broadcast, renewed at every step: after a crash the send resumes this much later. */
  leaseMs: number;
  /** After a failed step the send is tried again this much later. */
  retryMs: number;
  /** Failed tries in a row (a peer's outage not counted) after which the broadcast is FAILED. */
  maxAttempts: number;
  /** The length of one of abTest.decideAfterMinutes' minutes (60,000; tests shorten it). */
  minuteMs: number;
}

/** What the broadcast use cases are given (server.ts wires them). */
export interface BroadcastDeps {
  store: Store;
  broadcasts: BroadcastRepository;
  recipients: RecipientCollections;
  messages: MessageCollections;
  suppressions: Collection<SuppressionDoc>;
  outbox: OutboxRepository;
  audience: BroadcastAudience;
  catalog: BroadcastCatalog;
  /** A test send's render values and BLOCKED rule, by address. */
  recipientLookup: RecipientLookup;
  links: PublicLinks;
  domains: Pick<DomainPolicy, 'requireVerified'>;
  settings: SendSettings;
  now(): Date;
  newId(): string;
  /** Wakes the outbox relay after a commit that recorded jobs or facts. */
  notifyOutbox(): void;
  /** Waits, bounded, until committed jobs are on JetStream (test sends answer once queued). */
  awaitPublished(): Promise<boolean>;
  /** Something of a broadcast is due at `at`: the send poller is told. */
  wakeSend(at: Date): void;
  /** A broadcast became FAILED; `reason` names the cause (a metric's label). */
  broadcastFailed?(reason: string): void;
  logger?: Pick<Logger, 'warn' | 'info'>;
}
