export * from './template';
export * from './html-values';
