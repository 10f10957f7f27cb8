export * from './token';
export * from './derive';
export { MAX_ID_BYTES } from './codec';
