// The operations whose service-side work has longer limits than the clients' standard deadline, by
// operationId, each with the GATEWAY_DEADLINES entry derived from those limits (@mailer/kit
// time-limits.ts): their own limit ends first, and its error is the answer.
import { GATEWAY_DEADLINES } from '@mailer/kit';

const { feedRead, segmentRead, segmentMembers, bulkWrite, batchSend } = GATEWAY_DEADLINES;

export const OPERATION_DEADLINES: Readonly<Record<string, number>> = {
  // RSS newsletters: a feed read (10 s) after the ids' checks or a check's wait.
  previewRssFeed: feedRead,
  createRssNewsletter: feedRead,
  updateRssNewsletter: feedRead,
  checkRssNewsletter: feedRead,
  resumeRssNewsletter: feedRead,
  // Segments: the projection wait, then catalog calls.
  countSegment: segmentRead,
  previewSegment: segmentRead,
  previewSegmentExpression: segmentRead,
  listSegmentSubscribers: segmentMembers,
  // Bulk subscriber writes: the event backlog's wait, then the PubAck wait.
  syncSubscribers: bulkWrite,
  addTagsToSubscribers: bulkWrite,
  removeTagsFromSubscribers: bulkWrite,
  // A batch of mail: one lookup of every recipient, up to 500 renders, the PubAck wait.
  sendEmailMessages: batchSend,
};
