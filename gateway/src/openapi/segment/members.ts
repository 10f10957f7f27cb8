import { errorResponse, rateLimitHeaders } from '../common';

/** Listing by segment (GET /subscribers?segmentId=, GET /segments/{segmentId}/subscribers): shared text. */
export const SEGMENT_MEMBERS = `Members of a segment (\`segmentId\`): the subscribers for which the saved segment's expression is TRUE at the time of the request; a subscriber for which it is UNKNOWN (say, a comparison on a field without a value) or FALSE is not a member. \`segmentId\` combines with the other filters (AND): \`status\`, \`tagId\`, \`topicId\` and \`search\` narrow the members exactly as they narrow the whole list, the order is the same (registration time, then id), \`totalItems\` counts the members matching every filter and \`statusCounts\` the members matching every filter except \`status\`. The segment service owns the contact projection and evaluates the expression; the page's subscribers are then read from the subscriber service, so a subscriber deleted between the two reads is left out of that page. The answer reflects every write acknowledged before the request was received (read-after-write): while the segment service has not caught up it answers \`503 segment_projection_lagging\` rather than a stale page. A segment of another account is unknown here (\`404 segment_not_found\`). When the segment service cannot be reached the answer is \`503 segment_service_unavailable\`.`;

export const SEGMENT_MEMBERS_503 = errorResponse(
  'A backing service is unavailable: `segment_service_unavailable` (the segment service, which evaluates the segment, did not answer), `segment_projection_lagging` (it has not yet applied every acknowledged subscriber change; retry shortly), or another backing service or the message store (`service_unavailable`). Retry later with backoff.',
  ['service_unavailable', 'segment_service_unavailable', 'segment_projection_lagging'],
  rateLimitHeaders,
);
