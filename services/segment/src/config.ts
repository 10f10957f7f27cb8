import { commonConfig, loadConfig, peerAddressDefaults, storeConfig, TIME_LIMITS, z } from '@mailer/kit';

export const configSchema = z.object({
  ...commonConfig,
  ...storeConfig,
  /**
   * Its own address and its peers' (GRPC_CALLS): the subscriber service's (field catalog, tags and topics for
   * validating expressions); the rss and messaging services are asked what uses a segment before it is deleted.
   */
  ...peerAddressDefaults('segment'),
  /** Deadline of each call to the subscriber service. */
  SUBSCRIBER_DEADLINE_MS: z.coerce.number().int().min(100).max(TIME_LIMITS.peerCall).default(TIME_LIMITS.peerCall),
  /**
   * Durable consumer name of the contact projection on DOMAIN. A new name (with an empty store)
   * rebuilds the projection from the stream (DOMAIN keeps 30 days).
   */
  SEGMENT_PROJECTION_DURABLE: z.string().regex(/^[A-Za-z0-9_-]+$/).default('segment-projection'),
  /** Projection handlers in flight (events of one account are applied one at a time). */
  SEGMENT_PROJECTION_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Counts and previews wait at most this long for the projection to apply every DOMAIN event
   * published before the request (read-after-write), then answer UNAVAILABLE
   * segment_projection_lagging. The gateway's deadlines for these calls allow for it (never longer),
   * so the caller sees that error.
   */
  SEGMENT_READ_WAIT_MS: z.coerce.number().int().min(0).max(TIME_LIMITS.projectionWait).default(TIME_LIMITS.projectionWait),
});
export type Config = z.infer<typeof configSchema>;

export const loadSegmentConfig = (env: NodeJS.ProcessEnv = process.env): Config => loadConfig(configSchema, env);
