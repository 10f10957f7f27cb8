export * from './config';
export * from './logger';
export * from './metrics';
export * from './errors';
export * from './grpc-server';
export * from './grpc-client';
export * from './peer';
export * from './lifecycle';
