import { type TSchema, Type } from "@sinclair/typebox";

// The shape of a saved plan as `plumb plan --out` writes it (saved-plan.ts), checked whole before
// apply --plan reads any of it (saved-plan-shape.ts, with its validator compiled at build time by
// scripts/validators-module.ts): a hand-edited file (an object as a salt, a number as a name) is
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

export const SavedPlanShape = Type.Object({
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

// A saved plan of environments (saved-plan-environments.ts): one plan as above per environment,
// each with its name and the control plane it was computed against.
export const SavedEnvironmentsShape = Type.Object({
  format_version: Type.Literal("1"),
  environments: Type.Array(
    Type.Object({
      environment: Str,
      target: Type.Object({ api_url: Str, tenant_id: Nullable(Str) }),
    }),
  ),
});
