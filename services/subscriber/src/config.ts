import { commonConfig, loadConfig, PEER_DEADLINES, peerAddressDefaults, storeConfig, TIME_LIMITS, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  // Its own address, then the services asked for their usages of a field (FieldUsageService).
  ...peerAddressDefaults('subscriber'),
  /**
   * Deadline of each ListSegmentMembers call (GET /subscribers?segmentId=): above the segment service's
   * projection wait and catalog calls, below the gateway's deadline for that request, so a lagging
   * projection answers segment_projection_lagging and a dead service segment_service_unavailable.
   */
  SEGMENT_DEADLINE_MS: z.coerce.number().int().min(100).max(PEER_DEADLINES.segmentMembers).default(PEER_DEADLINES.segmentMembers),
  /** Deadline of each ListFieldUsages call; a source slower than this counts as not answered. */
  FIELD_USAGE_DEADLINE_MS: z.coerce.number().int().min(100).max(TIME_LIMITS.peerCall).default(TIME_LIMITS.peerCall),
  /** Outbox relay: documents per round, and how long published ones are kept (0: deleted once published). */
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  OUTBOX_RETAIN_PUBLISHED_MS: z.coerce.number().int().min(0).default(0),
  /**
   * Bulk writes (sync, bulk tagging) wait while more events than this are waiting to be published,
   * so a long import cannot outrun the relay and pile up events in memory; they answer UNAVAILABLE
   * (event_backlog_full) when the backlog does not shrink in time (NATS down).
   */
  OUTBOX_MAX_PENDING: z.coerce.number().int().min(100).default(10_000),
  /**
   * A write answers once its events are published to JetStream (read-after-write for the services
   * projecting DOMAIN), waiting at most this long; past it the write answers anyway (it is committed,
   * the relay publishes it later) and read-after-write does not hold for it. 0: never wait.
   */
  OUTBOX_PUBLISH_WAIT_MS: z.coerce.number().int().min(0).max(TIME_LIMITS.publishWait).default(TIME_LIMITS.publishWait),
});
export type Config = z.infer<typeof configSchema>;

export const loadSubscriberConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
