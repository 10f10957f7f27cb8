// html-to-text 10 ships no type declarations (@types/html-to-text describes 9); this is the one call we use.
declare module 'html-to-text' {
  export function convert(html: string, options?: Record<string, unknown>): string;
}
