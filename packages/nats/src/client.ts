// Everything of this package but the parts kept in a service's store (the outbox, processed messages):
// what a process without a store loads (`@mailer/nats/client`). The gateway, for one, would otherwise
// load mongoose and the MongoDB driver (whose BSON serializer alone holds a 17 MB buffer) for nothing.
export type { NatsConnection, JetStreamClient, KV } from 'nats';
export { connectNats } from './connect';
export type { ConnectNatsOptions } from './connect';
export { STREAMS, streamSpecs, streamConfig, ensureStreams } from './streams';
export type { StreamSpec, StreamSpecOptions } from './streams';
export { publish, publishBatch, extractTraceContext, traceHeaders } from './publish';
export type { BatchMessage, PublishOptions, PublishResult } from './publish';
export { runConsumer, consumerConfig, runningConsumers } from './consumer';
export type { HandlerResult, BatchHandlerResult, ConsumerOptions, ConsumedMessage, ConsumerHandle, ConsumerCounts } from './consumer';
export { openKv } from './kv';
export { ACCOUNT_NAMES_BUCKET, accountNames, type AccountName } from './accounts';
export type { AccountNames } from './accounts';
export { declareJetStream } from './declared';
export { NatsUnavailable } from './errors';
export { ANY_DURABLE, covers, inboxPrefix, natsPermissions, natsUsers, serviceAccess } from './access';
export type { ConsumerDeclaration, NatsAccess, NatsPermissions, NatsUser } from './access';
export type { JetStreamDeclarations, DeclaredJetStream } from './declared';
export type { KvOptions } from './kv';
export type { Log } from './log';
export { AppliedWatermark, readAfterWrite } from './watermark';
export type { ReadAfterWrite, ReadAfterWriteOptions } from './watermark';
export { ackedPublisher, JetStreamPublishError, PublishUnanswered } from './acked-publisher';
export type { AckedPublisher, PubAck } from './acked-publisher';
