import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";

// Response shape checks at the edge: compiled once per schema, lenient about extra properties so a
// server that adds fields (allowed by any API's evolution) does not break plumb, strict about the
// fields plumb reads.

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Deep copy of a schema without `additionalProperties: false`; symbol keys (TypeBox's Kind) kept. */
function lenient(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lenient);
  if (node === null || typeof node !== "object") return node;
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(node)) {
    const value = (node as Record<string | symbol, unknown>)[key];
    if (key === "additionalProperties" && value === false) continue;
    copy[key] = lenient(value);
  }
  return copy;
}

function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(lenient(schema) as TSchema);
    compiled.set(schema, check);
  }
  return check;
}

/** null when `value` fits `schema`; otherwise up to three "path: message" problems. */
export function checkShape(schema: TSchema, value: unknown): string[] | null {
  const check = checkerFor(schema);
  if (check.Check(value)) return null;
  const problems: string[] = [];
  for (const error of check.Errors(value)) {
    problems.push(`${error.path || "/"}: ${error.message}`);
    if (problems.length === 3) break;
  }
  return problems;
}
