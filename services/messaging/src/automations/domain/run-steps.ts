// SET_FIELD with `fromProperty` (the API contract): the event property at that path, converted to the field's
// kind; a missing or unconvertible property fails that step (the run goes on).
import type { FieldType, FieldValue } from './automation';

const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The member at `a.b.0.c` (array items by index), own members only; undefined when absent. */
export function propertyAt(properties: unknown, path: string): unknown {
  let at: unknown = properties;
  for (const name of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.prototype.hasOwnProperty.call(at, name)) return undefined;
    at = (at as Record<string, unknown>)[name];
  }
  return at;
}

export function valueFromProperty(properties: unknown, path: string, type: FieldType): { value: FieldValue } | { problem: string } {
  const v = propertyAt(properties, path);
  const fail = (why: string) => ({ problem: `property ${path} ${why}` });
  if (v === undefined || v === null) return fail('is missing from the event');
  switch (type) {
    case 'TEXT':
    case 'LONG_TEXT':
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return { value: { kind: 'TEXT', text: String(v) } };
      return fail(`cannot be converted to a ${type} value`);
    case 'EMAIL':
      return typeof v === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim()) ? { value: { kind: 'EMAIL', text: v.trim().toLowerCase() } } : fail('is not an email address');
    case 'NUMBER': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      return Number.isFinite(n) ? { value: { kind: 'NUMBER', number: n } } : fail('is not a number');
    }
    case 'DATE': {
      const text = typeof v === 'string' ? v.slice(0, 10) : '';
      const d = new Date(`${text}T00:00:00Z`);
      return LOCAL_DATE.test(text) && !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text ? { value: { kind: 'DATE', date: text } } : fail('is not a date (YYYY-MM-DD)');
    }
    case 'BOOLEAN':
      if (typeof v === 'boolean') return { value: { kind: 'BOOLEAN', booleanValue: v } };
      if (v === 'true' || v === 'false') return { value: { kind: 'BOOLEAN', booleanValue: v === 'true' } };
      return fail('is not a boolean');
    case 'SINGLE_CHOICE':
      return typeof v === 'string' ? { value: { kind: 'SINGLE_OPTION', optionId: v.toLowerCase() } } : fail('is not an option id');
    case 'MULTI_CHOICE':
      return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')
        ? { value: { kind: 'MULTI_OPTION', optionIds: (v as string[]).map((x) => x.toLowerCase()) } }
        : fail('is not a list of option ids');
  }
}
