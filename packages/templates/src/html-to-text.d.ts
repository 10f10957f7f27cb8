// html-to-text 10 ships no type declarations (@types/html-to-text describes 9); these are the calls we use.
declare module 'html-to-text' {
  export function convert(html: string, options?: Record<string, unknown>): string;
  /** Compiles the options once (selector decision tree); the returned converter is what convert() builds on every call. */
  export function compile(options?: Record<string, unknown>): (html: string) => string;
}
