/** Thrown by both adapters when a write would violate a unique index (MongoDB's E11000). */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  readonly collection: string;
  readonly index: string;
  readonly key: Record<string, unknown>;

  constructor(collection: string, index: string, key: Record<string, unknown>) {
    super(`E11000 duplicate key error collection: ${collection} index: ${index} dup key: ${formatKey(key)}`);
    this.name = 'DuplicateKeyError';
    this.collection = collection;
    this.index = index;
    this.key = key;
  }
}

export interface ValidationProblem {
  path: string;
  problem: string;
}

/** Thrown by both adapters when a document (inserted, or as it would be after an update) does not satisfy its schema. */
export class DocumentValidationError extends Error {
  readonly problems: ValidationProblem[];
  readonly collection?: string;

  constructor(problems: ValidationProblem[], collection?: string) {
    super(
      `document failed validation${collection ? ` in ${collection}` : ''}: ` +
        problems.map((p) => `${p.path}: ${p.problem}`).join('; '),
    );
    this.name = 'DocumentValidationError';
    this.problems = problems;
    this.collection = collection;
  }
}

function formatKey(key: Record<string, unknown>): string {
  const parts = Object.entries(key).map(([k, v]) => {
    const text = v instanceof Date ? `new Date(${v.getTime()})` : JSON.stringify(v) ?? 'null';
    return `${k}: ${text}`;
  });
  return `{ ${parts.join(', ')} }`;
}

/**
 * Maps mongoose's ValidationError / CastError to DocumentValidationError; anything else is returned as is.
 * Both adapters route write errors through here so callers catch one error type.
 */
export function fromMongooseError(err: unknown, collection: string): unknown {
  const e = err as { name?: string; errors?: Record<string, { path?: string; message?: string }>; path?: string; message?: string };
  if (e?.name === 'ValidationError' && e.errors) {
    const problems = Object.entries(e.errors).map(([path, sub]) => ({ path: sub.path ?? path, problem: sub.message ?? 'invalid' }));
    return new DocumentValidationError(problems, collection);
  }
  if (e?.name === 'CastError' || e?.name === 'StrictModeError') {
    return new DocumentValidationError([{ path: e.path ?? '', problem: e.message ?? 'invalid value' }], collection);
  }
  return err;
}
