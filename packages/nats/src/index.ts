export * from './client';
export { outboxSchema, outboxRecord, outboxRepository, startOutboxRelay, OUTBOX_COLLECTION } from './outbox';
export type { OutboxDoc, OutboxFact, OutboxRelay, OutboxRelayOptions, OutboxRepository } from './outbox';
export { processedMessages, processedMessageSchema, messageIdOf, PROCESSED_MESSAGES_COLLECTION, DEFAULT_PROCESSED_RETENTION_MS } from './processed';
export type { ProcessedMessages, ProcessedMessagesOptions, ProcessedMessageDoc, OnceResult } from './processed';
