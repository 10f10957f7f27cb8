import { protoEnum } from '../src/proto-enum';

// What ts-proto emits for `enum Colour { COLOUR_UNSPECIFIED = 0; COLOUR_BLUE = 1; COLOUR_DARK_RED = 2; }`,
// declared out of order to show that names follow the numbers.
enum Colour {
  COLOUR_UNSPECIFIED = 0,
  COLOUR_DARK_RED = 2,
  COLOUR_BLUE = 1,
  UNRECOGNIZED = -1,
}

describe('protoEnum', () => {
  const colours = protoEnum(Colour, 'COLOUR_');

  it('names are the members without prefix in numeric order, UNSPECIFIED and UNRECOGNIZED left out', () => {
    expect(colours.names).toEqual(['BLUE', 'DARK_RED']);
  });

  it('maps both ways', () => {
    expect(colours.toProto('DARK_RED')).toBe(Colour.COLOUR_DARK_RED);
    expect(colours.fromProto(Colour.COLOUR_BLUE)).toBe('BLUE');
    expect(colours.toProtoOrUnspecified(undefined)).toBe(Colour.COLOUR_UNSPECIFIED);
  });

  it('a value without an API name throws from fromProto and is undefined from tryFromProto', () => {
    for (const v of [Colour.COLOUR_UNSPECIFIED, Colour.UNRECOGNIZED, 99]) {
      expect(() => colours.fromProto(v)).toThrow(/has no API name/);
      expect(colours.tryFromProto(v)).toBeUndefined();
    }
    expect(colours.tryFromProto(2)).toBe('DARK_RED');
    expect(() => (colours.toProto as (n: string) => number)('GREEN')).toThrow(/COLOUR_GREEN/);
  });
});
