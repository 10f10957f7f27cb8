import { formatNumber, languageRanges, negotiateLocale, numberFormatter } from '../src';

describe('Accept-Language negotiation', () => {
  test.each([
    [undefined, 'en-US'],
    ['', 'en-US'],
    ['de-DE', 'de-DE'],
    ['de-DE,de;q=0.9,en;q=0.8', 'de-DE'],
    ['en;q=0.5, de-CH;q=0.9', 'de-CH'], // q-values, not header order
    ['fr;q=0.8, de;q=0.8', 'fr'], // equal weights keep header order
    ['xx-YY, zz;q=0.9, de;q=0.1', 'de'], // unsupported ones are skipped
    ['de;q=0, en-GB', 'en-GB'], // q=0 means "not acceptable"
    ['*', 'en-US'],
    ['%%%, ;;;, ,', 'en-US'], // garbage
    ['de;q=2', 'en-US'], // a malformed weight is not trusted
    ['a'.repeat(2000), 'en-US'], // overlong header
    ['x-klingon', 'en-US'],
  ])('%j -> %s', (header, locale) => {
    expect(negotiateLocale(header)).toBe(locale);
  });

  test('languageRanges orders by weight and drops what is not acceptable', () => {
    expect(languageRanges('da, en-GB;q=0.8, en;q=0.7, *;q=0.5, fr;q=0')).toEqual(['da', 'en-GB', 'en']);
  });
});

describe('formatNumber', () => {
  test.each([
    [1234567, undefined, '1,234,567'],
    [1234567, 'en-US', '1,234,567'],
    [1234567, 'de-DE', '1.234.567'],
    [1234567, 'de-DE,de;q=0.9', '1.234.567'],
    [1234567, 'garbage!!', '1,234,567'],
    [0, 'de-DE', '0'],
    [999, 'de-DE', '999'],
    [1000, 'en', '1,000'],
    [9007199254740991, 'en-US', '9,007,199,254,740,991'],
  ])('%d in %j is %j', (value, header, formatted) => {
    expect(formatNumber(value, header)).toEqual({ value, formattedValue: formatted });
  });

  test('numberFormatter formats many values for one request alike', () => {
    const format = numberFormatter('de-DE');
    expect([1, 1000, 1000000].map((v) => format(v).formattedValue)).toEqual(['1', '1.000', '1.000.000']);
  });
});
