export * from './period';
export * from './buckets';
export * from './counting';
export * from './number';
