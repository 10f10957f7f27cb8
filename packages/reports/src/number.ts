// The API's `Number {value, formattedValue}` (spec "Other records"): formattedValue is the value
// written for the request's Accept-Language (the API contract "Reports": `1,234,567` in en-US, `1.234.567` in
// de-DE), the best locale this runtime supports, en-US when none fits or the header is garbage.

export interface ApiNumber {
  value: number;
  formattedValue: string;
}

export const DEFAULT_LOCALE = 'en-US';
// A header is client input: only so much of it is read (browsers send a handful of entries).
const MAX_HEADER_LENGTH = 1024;
const MAX_ENTRIES = 32;
const LANGUAGE_RANGE = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;
const QUALITY = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

/** The language ranges of an Accept-Language header, best first (RFC 9110 q-values; equal q keeps header order; q=0 and `*` dropped). */
export function languageRanges(header: string | undefined | null): string[] {
  if (typeof header !== 'string' || header.length === 0 || header.length > MAX_HEADER_LENGTH) return [];
  const ranges: Array<{ tag: string; q: number; at: number }> = [];
  for (const [at, entry] of header.split(',').slice(0, MAX_ENTRIES).entries()) {
    const [tag, ...params] = entry.split(';').map((p) => p.trim());
    if (!tag || tag === '*' || !LANGUAGE_RANGE.test(tag)) continue;
    let q = 1;
    for (const p of params) {
      if (QUALITY.test(p)) q = Number(p.slice(2));
      else if (/^q=/i.test(p)) q = 0; // a malformed weight: the entry is not trusted
    }
    if (q > 0) ranges.push({ tag, q, at });
  }
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((r) => r.tag);
}

/** The best locale of the header that Intl.NumberFormat supports here (canonical form), else en-US. */
export function negotiateLocale(header: string | undefined | null): string {
  for (const tag of languageRanges(header)) {
    try {
      const [supported] = Intl.NumberFormat.supportedLocalesOf([tag], { localeMatcher: 'lookup' });
      if (supported) return supported;
    } catch {
      // a structurally invalid tag (RangeError): try the next one
    }
  }
  return DEFAULT_LOCALE;
}

/** A formatter for many values of one request (Intl.NumberFormat is costly to build; reports hold thousands of values). */
export function numberFormatter(acceptLanguage: string | undefined | null): (value: number) => ApiNumber {
  const format = new Intl.NumberFormat(negotiateLocale(acceptLanguage), { maximumFractionDigits: 0, useGrouping: true });
  return (value) => ({ value, formattedValue: format.format(value) });
}

/** One value as the API's Number, written for the Accept-Language header. */
export function formatNumber(value: number, acceptLanguage: string | undefined | null): ApiNumber {
  return numberFormatter(acceptLanguage)(value);
}
