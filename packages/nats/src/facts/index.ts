/**
 * Typed facts: the one definition of every message on DOMAIN, EVENTS and JOBS. Producers build with
 * domainFact() / job() and the CustomEvent type; consumers parse with parseDomainFact() /
 * parseFact() / parseJob() / parseCustomEvent(), which throw MalformedFactError naming the first
 * offending member (a consumer terminates such a message). Encoding is JSON (docs/architecture.md "Domain facts").
 */
import type { z } from 'zod';
import { catalogFacts } from './catalog';
import { emailFacts, otherFacts } from './future';
import { MalformedFactError, parseWith } from './schema';
import { subscriberFacts } from './subscriber';

export { MalformedFactError, parseWith } from './schema';
export { SUBSCRIBER_STATUSES, SUBSCRIBER_PARTS, type ContactJson, type FieldValueJson } from './subscriber';
export { FIELD_TYPES } from './catalog';
export { EMAIL_KINDS, FORM_DECISIONS, EVENT_OUTCOMES } from './future';
/**
 * The parts facts are made of, for a consumer that reads only some members of a fact (a tolerant
 * reader: `DOMAIN_FACTS[type].pick(...)` keeps the shared types of what it reads).
 */
export { contact, fieldEntry, fieldValue, optOut } from './subscriber';
export { field, tag, topic } from './catalog';
export { customEvent, customEventSubject, parseCustomEvent, job, jobSubjects, parseJob, type CustomEvent, type Job, type JobKind } from './streams';

/** Every DOMAIN fact type (the subject is `domain.<type>`) and its schema. */
export const DOMAIN_FACTS = { ...subscriberFacts, ...catalogFacts, ...emailFacts, ...otherFacts };
export type FactType = keyof typeof DOMAIN_FACTS;
/** The fact of one type, as it travels. */
export type Fact<T extends FactType> = z.infer<(typeof DOMAIN_FACTS)[T]>;
/** Any DOMAIN fact (discriminated by `type`). */
export type DomainFact = { [T in FactType]: Fact<T> }[FactType];

export const FACT_TYPES = Object.keys(DOMAIN_FACTS) as FactType[];
export const isFactType = (type: unknown): type is FactType => typeof type === 'string' && Object.prototype.hasOwnProperty.call(DOMAIN_FACTS, type);

/** A fact with its subject, ready for the outbox or publish(). */
export interface DomainMessage<F extends DomainFact = DomainFact> {
  subject: string;
  payload: F;
}

export const factSubject = (type: FactType) => `domain.${type}`;

/** The subjects of every fact type starting with one of `prefixes` (e.g. `email.`): what one producer publishes. */
export const factSubjects = (...prefixes: string[]): string[] => FACT_TYPES.filter((t) => prefixes.some((p) => t.startsWith(p))).map(factSubject);

/** Builds a fact: the payload is typed by its definition, the subject follows from its type. */
export function domainFact<F extends DomainFact>(payload: F): DomainMessage<F> {
  return { subject: factSubject(payload.type), payload };
}

/** Parses a fact of a known type; throws MalformedFactError. */
export function parseFact<T extends FactType>(type: T, data: unknown): Fact<T> {
  return parseWith(DOMAIN_FACTS[type], data, `${type} fact`) as Fact<T>;
}

/** Parses any DOMAIN fact by its `type` member; throws MalformedFactError (also for an unknown type). */
export function parseDomainFact(data: unknown): DomainFact {
  const type = (data as { type?: unknown } | null)?.type;
  if (!isFactType(type)) throw new MalformedFactError('domain fact', `type: ${JSON.stringify(type ?? null)} is not a known fact type`);
  return parseFact(type, data);
}
