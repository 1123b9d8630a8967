import type { FieldPath } from "../manifest/locate.js";
import type { SourceLocation } from "../manifest/types.js";
import type { SecretOrigin, Spec } from "./merge-spec.js";

// Where a value of a merged manifest was written: the layer (environment default, the
// deployment's spec, its override) that produced it, located in that layer's own file.

type Locate = (path: FieldPath) => SourceLocation;

/** One layer of a merged spec: its values and how to point into the document that holds them. */
export type Layer = { spec: Spec; prefix: FieldPath; key: Locate; value: Locate };

const isRecord = (value: unknown): value is Spec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * True when this layer produced the value at `path`: the path exists in it, or a list or scalar on
 * the way replaced everything below it (JSON Merge Patch merges only objects).
 */
export function provides(spec: Spec, path: FieldPath): boolean {
  let current: unknown = spec;
  for (const segment of path) {
    if (Array.isArray(current)) return true;
    // Own keys only: `constructor` in an annotations map is not Object's.
    if (!isRecord(current) || !Object.hasOwn(current, String(segment))) return false;
    current = current[String(segment)];
    if (current === null) return false;
  }
  return current !== undefined;
}

type OriginInput = {
  /** Lowest first, as merged. */
  layers: readonly Layer[];
  secretOrigins: readonly SecretOrigin[];
  /** Paths outside spec (metadata, labels) are located by this. */
  metadata: (path: FieldPath, part: "key" | "value") => SourceLocation;
};

/** Key and value locators of a merged manifest, each pointing at the layer that produced the value. */
export function originLocators(input: OriginInput): { key: Locate; value: Locate } {
  const locate =
    (part: "key" | "value"): Locate =>
    (path) => {
      if (path[0] !== "spec") return input.metadata(path, part);
      const rest = path.slice(1);
      const base = input.layers.find((l) => l.prefix[0] === "spec") ?? input.layers.at(-1)!;
      if (rest.length === 0) return base[part](["spec"]);
      if (rest[0] === "secrets" && typeof rest[1] === "number") {
        const origin = input.secretOrigins[rest[1]];
        const layer = origin ? input.layers[origin.layer] : undefined;
        if (origin && layer) return layer[part]([...layer.prefix, "secrets", origin.index, ...rest.slice(2)]);
      }
      for (let i = input.layers.length - 1; i >= 0; i--) {
        const layer = input.layers[i]!;
        if (provides(layer.spec, rest)) return layer[part]([...layer.prefix, ...rest]);
      }
      // Absent everywhere (a missing field): the deployment's own spec, at the nearest ancestor.
      return base[part]([...base.prefix, ...rest]);
    };
  return { key: locate("key"), value: locate("value") };
}
