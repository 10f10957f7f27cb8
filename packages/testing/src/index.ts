export * from './nats';
export * from './processes';
