// Time limits of the work done while a request waits, and the gRPC deadlines derived from them, in
// one place. A limit a service applies to its own work (a feed read, the projection wait, a call to
// another service) must end before the deadline of the call it serves, with DEADLINE_MARGIN_MS to
// spare: then the caller gets that limit's own answer (422 feed_timeout, 503
// segment_projection_lagging, 503 naming the service that did not answer) rather than the gateway
// giving up first with a bare 503 service_unavailable while the work goes on behind it.
//
// Each deadline below is the sum of the limits of the work its callee does one step after another,
// plus the margin. A new limit, or a longer one, goes here, and the deadlines that wait for it follow.

/** The limits of work a service does while a caller waits (ms). */
export const TIME_LIMITS = {
  /** One call of a service to another while it serves a request: an id exists, a catalog, who uses a record. */
  peerCall: 2_000,
  /** Reading a customer's feed, redirects included (RSS newsletters). */
  feedRead: 10_000,
  /** A manual feed check waits at most this long for a poll of the same newsletter that is reading it. */
  feedCheckWait: 3_000,
  /** Rendering one template: the test render when it is saved, a preview, one message. */
  templateRender: 500,
  /** Resolving a webhook target's host name when the subscription is saved. */
  targetResolve: 2_000,
  /** Segment counts, previews and member pages wait at most this long for the contact projection (SEGMENT_READ_WAIT_MS). */
  projectionWait: 3_000,
  /** A write waits at most this long for its events' PubAck before it answers (OUTBOX_PUBLISH_WAIT_MS). */
  publishWait: 2_000,
  /** A bulk write waits at most this long for the backlog of unpublished events to shrink. */
  backlogWait: 3_000,
  /**
   * A batch of mail (POST /email-messages/batch, up to 500 messages) is looked up and rendered within
   * this, else refused with nothing stored (a busy replica): never stored after its caller gave up.
   */
  batchRender: 8_000,
} as const;

/** What a callee keeps after its limited steps: its store work and the answer's way back. */
export const DEADLINE_MARGIN_MS = 1_000;

/** The deadline of a call whose callee does `steps` one after another. */
export const deadlineOver = (...stepsMs: number[]): number => stepsMs.reduce((sum, ms) => sum + ms, DEADLINE_MARGIN_MS);

const L = TIME_LIMITS;

/**
 * The segment service's reads (count, preview, member page): the projection wait, then the catalog
 * calls they make one after another (the preview's topic, then the topics an opt-out condition reads).
 */
const segmentRead = deadlineOver(L.projectionWait, L.peerCall, L.peerCall);

/** Deadlines of calls between services (the ones not derived here are TIME_LIMITS.peerCall). */
export const PEER_DEADLINES = {
  /** The subscriber service's ListSegmentMembers (GET /subscribers?segmentId=; SEGMENT_DEADLINE_MS). */
  segmentMembers: segmentRead,
} as const;

/** The gateway's deadline for each kind of call to a service. */
export const GATEWAY_DEADLINES = {
  /**
   * Every call not named below. The longest work behind one is a transactional send: the recipient's
   * lookup, the render, the wait for the delivery job's PubAck (two peer calls one after the other,
   * as a form's save or a sender profile's delete make, take less).
   */
  standard: deadlineOver(L.peerCall, L.templateRender, L.publishWait),
  /**
   * RSS newsletter operations that read the feed (preview, create, update, check, resume): the
   * checks of the ids the newsletter names (in parallel) or a check's wait, the templates' test
   * render, then the feed.
   */
  feedRead: deadlineOver(Math.max(L.peerCall, L.feedCheckWait), L.templateRender, L.feedRead),
  /** Segment counts and previews. */
  segmentRead,
  /** GET /subscribers?segmentId=: the subscriber service waits for the segment service's member page. */
  segmentMembers: deadlineOver(PEER_DEADLINES.segmentMembers),
  /** Bulk subscriber writes (sync, bulk tagging): the backlog wait, the write, the PubAck wait. */
  bulkWrite: deadlineOver(L.backlogWait, L.publishWait),
  /** A batch of mail: its lookups and renders, then the PubAck wait. */
  batchSend: deadlineOver(L.batchRender, L.publishWait),
} as const;

/**
 * The longest any call may wait for its answer: the longest gateway deadline (a service's own calls to
 * another have shorter deadlines, within the call they serve). A process that stops drains for at
 * least this long, or a rolling update would cut off the longest operations in flight (an RSS feed
 * preview) instead of answering them.
 */
export const LONGEST_DEADLINE_MS = Math.max(...Object.values(GATEWAY_DEADLINES));

/** How long a stopping process lets the calls in flight finish: the longest deadline, and the margin for the answer's way back. */
export const SHUTDOWN_DRAIN_MS = LONGEST_DEADLINE_MS + DEADLINE_MARGIN_MS;

/**
 * A process exits at most this long after it stopped accepting (SIGTERM + SHUTDOWN_DELAY_MS): the drain,
 * then its consumers, NATS and the store. The chart refuses a terminationGracePeriodSeconds that does
 * not exceed shutdownDelaySeconds plus this (in whole seconds).
 */
export const SHUTDOWN_EXIT_MS = SHUTDOWN_DRAIN_MS + 5_000;
