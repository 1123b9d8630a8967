import type { TSchema } from "@sinclair/typebox";
import { compileShape, type ShapeCheck } from "../../schema/compile-shape.js";

// Response shape checks at the edge: compiled once per schema (ajv, schema/compile-shape.ts),
// lenient about extra properties so a server that adds fields (allowed by any API's evolution) does
// not break plumb, strict about the fields plumb reads.

const compiled = new WeakMap<TSchema, ShapeCheck>();

/** Deep copy of a schema without `additionalProperties: false`. */
function lenient(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lenient);
  if (node === null || typeof node !== "object") return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "additionalProperties" && value === false) continue;
    copy[key] = lenient(value);
  }
  return copy;
}

/** null when `value` fits `schema`; otherwise the "path: message" problem found. */
export function checkShape(schema: TSchema, value: unknown): string[] | null {
  let check = compiled.get(schema);
  if (!check) {
    check = compileShape(lenient(schema) as object);
    compiled.set(schema, check);
  }
  const problems = check(value);
  return problems.length === 0 ? null : problems;
}
