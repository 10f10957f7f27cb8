/**
 * Proto enums <-> the API's strings, for every enum of the contract through this one helper (the
 * gateway's mappers and the services' handlers alike).
 * ts-proto emits `enum FieldType { FIELD_TYPE_UNSPECIFIED = 0, FIELD_TYPE_TEXT = 1, ..., UNRECOGNIZED = -1 }`;
 * the API name is the member name without the enum's prefix (`TEXT`). UNSPECIFIED and UNRECOGNIZED
 * have no API name: a service that answers one is a bug (500), never a value to show.
 */

type EnumObject = Record<string, string | number>;

/** The API names of an enum: its members with the prefix removed, UNSPECIFIED excluded. */
export type ApiNames<E extends EnumObject, P extends string> = {
  [K in keyof E]: K extends `${P}UNSPECIFIED` ? never : K extends `${P}${infer N}` ? N : never;
}[keyof E];

export interface ProtoEnum<E extends EnumObject, N extends string> {
  /** The API names in the enum's numeric order (what the OpenAPI document lists). */
  readonly names: readonly N[];
  toProto(name: N): E[keyof E];
  fromProto(value: number): N;
  /** The API name, or undefined for UNSPECIFIED and unknown values (a service validating a request decides). */
  tryFromProto(value: number): N | undefined;
  /** UNSPECIFIED (0) for an absent name: proto3's "not given". */
  toProtoOrUnspecified(name: N | undefined): E[keyof E];
}

export function protoEnum<E extends EnumObject, P extends string>(enumObject: E, prefix: P): ProtoEnum<E, ApiNames<E, P>> {
  type N = ApiNames<E, P>;
  const byName = new Map<string, number>();
  const byValue = new Map<number, N>();
  for (const [member, value] of Object.entries(enumObject)) {
    if (typeof value !== 'number' || !member.startsWith(prefix)) continue; // numeric enums map values back to names too
    const name = member.slice(prefix.length);
    if (name === 'UNSPECIFIED') continue;
    byName.set(name, value);
    byValue.set(value, name as N);
  }
  const names = [...byValue.entries()].sort(([a], [b]) => a - b).map(([, n]) => n);
  return {
    names,
    toProto(name) {
      const value = byName.get(name);
      if (value === undefined) throw new Error(`${prefix}${name} is not a member of the proto enum`);
      return value as E[keyof E];
    },
    fromProto(value) {
      const name = byValue.get(value);
      if (name === undefined) throw new Error(`${prefix}* value ${value} has no API name`);
      return name;
    },
    tryFromProto(value) {
      return byValue.get(value);
    },
    toProtoOrUnspecified(name) {
      return (name === undefined ? 0 : this.toProto(name)) as E[keyof E];
    },
  };
}
