import { ERROR_CATALOGUE } from '../src/errors';
import { MAX_JSON_DEPTH, rejectUnrepresentable, scanJson } from '../src/middleware/json-scan';

const scan = (text: string) => scanJson(Buffer.from(text, 'utf8'));
const nested = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);
const errorIdOf = (f: () => unknown) => {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as { errorId?: string }).errorId;
  }
};

describe('scanJson', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more, objects and arrays alike`, () => {
    expect(errorIdOf(() => scan(nested(MAX_JSON_DEPTH)))).toBeUndefined();
    expect(errorIdOf(() => scan(nested(MAX_JSON_DEPTH + 1)))).toBe('json_too_deep');
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(errorIdOf(() => scan(objects))).toBe('json_too_deep');
    const mixed = (levels: number) => '[' + '{"x":'.repeat(levels - 1) + '1' + '}'.repeat(levels - 1) + ']';
    expect(errorIdOf(() => scan(mixed(MAX_JSON_DEPTH)))).toBeUndefined();
    expect(errorIdOf(() => scan(mixed(MAX_JSON_DEPTH + 1)))).toBe('json_too_deep');
  });

  it('counts depth, not brackets: siblings do not add up', () => {
    expect(errorIdOf(() => scan('[' + '[],'.repeat(10_000) + '[]]'))).toBeUndefined();
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ a: '['.repeat(100), b: 'x\\"[[[[' + '{'.repeat(100), c: '\\\\', d: '{'.repeat(100) });
    expect(errorIdOf(() => scan(inString))).toBeUndefined();
    // a quote escaped by an odd run of backslashes does not close the string; an even run does
    expect(errorIdOf(() => scan('["\\\\\\"' + '['.repeat(100) + '"]'))).toBeUndefined();
    expect(errorIdOf(() => scan('["\\\\"' + '['.repeat(MAX_JSON_DEPTH + 1)))).toBe('json_too_deep');
  });

  it('is not recursive: 1,000,000 levels are refused without a stack overflow', () => {
    expect(errorIdOf(() => scan(nested(1_000_000)))).toBe('json_too_deep');
  });

  it('flags bodies whose numbers may be beyond the double range (exponent, 309+ digits), not others', () => {
    expect(scan('{"a":1e400}').mayOverflowNumbers).toBe(true);
    expect(scan('{"a":-1.5E+3}').mayOverflowNumbers).toBe(true);
    expect(scan(`{"a":${'9'.repeat(400)}}`).mayOverflowNumbers).toBe(true);
    expect(scan(`{"a":${'9'.repeat(300)}.5}`).mayOverflowNumbers).toBe(false);
    expect(scan('{"a":true,"b":false,"c":12345.678,"e":"1e400","f":null}').mayOverflowNumbers).toBe(false);
  });

  it('the catalogue states the same limit', () => {
    expect(ERROR_CATALOGUE.find((e) => e.errorId === 'json_too_deep')?.meaning).toContain(`${MAX_JSON_DEPTH} levels`);
  });
});

describe('rejectUnrepresentable', () => {
  const all = { mayOverflowNumbers: true, maySurrogates: true, mayProtoKey: true };
  it('names the first member beyond the double range', () => {
    expect(() => rejectUnrepresentable(JSON.parse('{"a":[1,{"b":1e400}]}'), all)).toThrow('body.a[1].b is a number out of range');
    expect(() => rejectUnrepresentable(JSON.parse(`[-${'9'.repeat(400)}]`), all)).toThrow('body[0] is a number out of range');
    expect(() => rejectUnrepresentable(JSON.parse('{"a":1e300,"b":[1e-400]}'), all)).not.toThrow();
  });

  it('names the first string or member name with an unpaired surrogate; pairs pass', () => {
    expect(() => rejectUnrepresentable(JSON.parse('{"a":["x","A\\udfffB"]}'), all)).toThrow('body.a[1] holds an unpaired UTF-16 surrogate');
    expect(() => rejectUnrepresentable(JSON.parse('{"a":"\\ud800"}'), all)).toThrow('body.a holds');
    expect(() => rejectUnrepresentable(JSON.parse('{"p":{"\\ud83dx":1}}'), all)).toThrow('body.p has a member name');
    expect(() => rejectUnrepresentable(JSON.parse('{"a":"\\ud83d\\ude00 \\u00e9"}'), all)).not.toThrow();
  });

  it('returns the path of the first __proto__ member, written plainly or escaped; constructor and prototype pass', () => {
    expect(rejectUnrepresentable(JSON.parse('{"e":{"k":1,"__proto__":{"admin":true}},"f":{"__proto__":1}}'), all)).toBe('body.e.__proto__');
    expect(rejectUnrepresentable(JSON.parse('[{"__pr\\u006fto__":1}]'), all)).toBe('body[0].__proto__');
    expect(rejectUnrepresentable(JSON.parse('{"constructor":{"prototype":{"x":1}},"proto":"__proto__"}'), all)).toBeUndefined();
  });

  it('the scan flags a possible __proto__ member: the word, or any \\u00 escape', () => {
    expect(scanJson(Buffer.from('{"__proto__":1}')).mayProtoKey).toBe(true);
    expect(scanJson(Buffer.from('{"_\\u005fproto__":1}')).mayProtoKey).toBe(true);
    expect(scanJson(Buffer.from('{"__pr\\u006fto__":1}')).mayProtoKey).toBe(true);
    expect(scanJson(Buffer.from('{"name":"welcome","k":1}')).mayProtoKey).toBe(false);
  });

  it('the scan flags surrogate escapes only', () => {
    expect(scanJson(Buffer.from('{"a":"\\uD800"}')).maySurrogates).toBe(true);
    expect(scanJson(Buffer.from('{"a":"\\u00e9 ud800"}')).maySurrogates).toBe(false);
  });
});
