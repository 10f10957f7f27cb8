export * from './token';
export * from './derive';
export * from './machine';
export { MAX_ID_BYTES } from './codec';
export * from './sealed';
