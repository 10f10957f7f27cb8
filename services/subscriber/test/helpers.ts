// Shared by the unit tests: DomainError capture and a small account fixture.
import { DomainError } from '@mailer/kit';
import type { AccountDefinitions } from '../src/domain/contacts';
import { Catalog } from '../src/domain/fields';
import type { FieldDef, FieldType, TagDef, TopicDef } from '../src/domain/types';

/** The errorId (and code, details) a function throws; a non-DomainError is reported as such. */
export function errorOf(fn: () => unknown): { errorId: string; code?: number; details?: unknown; message: string } | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return { errorId: err.errorId, code: err.code, details: err.details, message: err.message };
    return { errorId: `not a DomainError: ${String(err)}`, message: String(err) };
  }
  return undefined;
}
export const errorIdOf = (fn: () => unknown): string | undefined => errorOf(fn)?.errorId;

let n = 0;
/** Deterministic UUIDs: uuid(1) = 00000000-0000-4000-8000-000000000001. */
export const uuid = (i: number = ++n + 1000): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

export function field(fieldType: FieldType, over: Partial<FieldDef> = {}): FieldDef {
  const id = over.id ?? uuid();
  const options =
    fieldType === 'SINGLE_CHOICE' || fieldType === 'MULTI_CHOICE'
      ? [
          { id: uuid(), label: 'Red', position: 1, active: true },
          { id: uuid(), label: 'Green', position: 2, active: true },
          { id: uuid(), label: 'Old', position: 3, active: false },
        ]
      : [];
  return { id, label: fieldType, personalizationTagName: fieldType.toLowerCase(), fieldType, required: false, internal: false, active: true, position: 2, options, ...over };
}

export function definitions(fields: FieldDef[], tags: TagDef[] = [], topics: TopicDef[] = []): AccountDefinitions {
  return { catalog: new Catalog(fields), tags: new Map(tags.map((t) => [t.id, t])), topics: new Map(topics.map((t) => [t.id, t])) };
}

export const tag = (id = uuid(), name = `tag-${id.slice(-4)}`): TagDef => ({ id, name, createdAt: '2024-01-01T00:00:00.000Z' });
export const topic = (over: Partial<TopicDef> = {}): TopicDef => ({ id: uuid(), label: 'News', description: null, active: true, isDefault: false, createdAt: '2024-01-01T00:00:00.000Z', ...over });
