export * from './config';
export * from './logger';
export * from './metrics';
export * from './errors';
export * from './grpc-server';
export * from './call-context';
export * from './grpc-client';
export * from './lifecycle';
