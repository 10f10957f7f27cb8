import type { components, operations } from '../generated/openapi';

/**
 * The TypeScript types of requests, generated from the OpenAPI document (`npm run openapi-types`
 * writes src/generated/openapi.ts): what the validator lets through, defaults filled in. A member
 * added to or removed from a schema changes what the mapping code sees, so no body type is written
 * by hand beside its schema.
 */
export type Schemas = components['schemas'];

export type OperationId = keyof operations;

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;

/** An operation's JSON body (`undefined` when the operation has none or it is optional and absent). */
export type BodyOf<K extends OperationId> = JsonBody<operations[K]['requestBody']>;
/** An operation's query parameters (those with a default always present). */
export type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;
/** An operation's path parameters. */
export type PathOf<K extends OperationId> = NonNullable<operations[K]['parameters']['path']>;
