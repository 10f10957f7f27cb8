// The building blocks every fact schema uses, and the one error a consumer sees for a fact that does
// not parse. Facts travel as JSON (see docs/architecture.md "Domain facts"): times are ISO 8601 strings on the wire.
import { z } from 'zod';

/** A fact (or job) that does not match its definition; `reason` names the first offending member. */
export class MalformedFactError extends Error {
  constructor(
    readonly what: string,
    readonly reason: string,
  ) {
    super(`malformed ${what}: ${reason}`);
    this.name = 'MalformedFactError';
  }
}

/** A non-empty identifier. */
export const id = z.string().min(1, 'must not be empty');
/** An instant as an ISO 8601 string (what Date.toISOString writes). */
export const instant = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 instant');

/** Any JSON value, but present (z.unknown() alone would accept a missing member). */
export const json = z.unknown().refine((v) => v !== undefined, 'is required');

/** Members every DOMAIN fact carries: its type (the subject without `domain.`), account and time. */
export const envelope = <T extends string>(type: T) => ({ type: z.literal(type), accountId: id, occurredAt: instant });

/** "subscriber.email: expected string, received undefined" for the first issue of a failed parse. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'does not parse';
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Parses `data` with `schema`; throws MalformedFactError naming `what` and the first problem. */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(data);
  if (!result.success) throw new MalformedFactError(what, firstIssue(result.error));
  return result.data;
}
