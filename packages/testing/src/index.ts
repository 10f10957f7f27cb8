export * from './nats';
export * from './processes';
export * from './gateway';
export * from './proxy';
export * from './smtp';
export * from './health';
export * from './wait';
export * from './mesh';
