import { type TSchema, Type } from "@sinclair/typebox";
import { compileShape } from "../../schema/compile-shape.js";

// The shape of a saved plan as `plumb plan --out` writes it (saved-plan.ts), checked whole before
// apply --plan reads any of it: a hand-edited file (an object as a salt, a number as a name) is
// refused as plan-invalid instead of failing somewhere inside apply.

const Str = Type.String();
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const SavedInputs = Type.Object({
  kind: Str,
  name: Str,
  manifest_digest: Str,
  live: Nullable(Type.Object({ id: Str, updated_at: Str, latest_revision_id: Nullable(Str), digest: Str })),
  secrets: Nullable(Type.Object({ salt: Str, values: Type.Record(Str, Str), set: Type.Optional(Str) })),
  source_digest: Nullable(Str),
});

const SavedPlanShape = Type.Object({
  format_version: Type.Literal("1"),
  changes: Type.Array(Type.Object({ kind: Str, name: Str, action: Str })),
  prune: Type.Optional(Type.Array(Type.Object({ kind: Str, name: Str }))),
  saved: Type.Object({
    version: Type.Number(),
    created_at: Str,
    targets: Type.Array(Str),
    prune: Type.Boolean(),
    replace: Type.Array(Str),
    objects: Type.Array(SavedInputs),
    organization: Nullable(Str),
  }),
});

const check = compileShape(SavedPlanShape);

// A saved plan of environments (saved-plan-environments.ts): one plan as above per environment,
// each with its name and the control plane it was computed against.
const SavedEnvironmentsShape = Type.Object({
  format_version: Type.Literal("1"),
  environments: Type.Array(
    Type.Object({
      environment: Str,
      target: Type.Object({ api_url: Str, tenant_id: Nullable(Str) }),
    }),
  ),
});

const checkEnvironments = compileShape(SavedEnvironmentsShape);

/** The `path: problem` lines where `value` is not a saved plan of environments' outer shape; [] when it is. */
export function savedEnvironmentsProblems(value: unknown): string[] {
  return checkEnvironments(value);
}

/** The `path: problem` line where `value` is not a saved plan's shape; [] when it is. */
export function savedPlanProblems(value: unknown): string[] {
  return check(value);
}
