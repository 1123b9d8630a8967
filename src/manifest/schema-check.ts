import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { MANIFEST_SCHEMAS, type ManifestKind, manifestValidator } from "../schema/validators.js";
import type { ParsedDocument } from "./parse/parse.js";
import type { Problem } from "./types.js";
import { toProblem } from "./validate/schema-messages.js";

export { formatField } from "./validate/field-path.js";
export { suggest } from "./validate/suggest.js";

type Kind = ManifestKind;

// A quick validator per kind (first error only), compiled at build time (schema/validators.ts),
// clears valid documents. Only an invalid one needs the detailed validator (every error, with its
// value and schema, to say where and what): it is compiled here, from the same JSON Schema, when
// a document of that kind first fails, and ajv's compiler is loaded only then. Precompiling it too
// would add ~400 KB of generated code (every error path kept) for what most runs never use.
const detailed = new Map<Kind, ValidateFunction>();
let detailedAjv: Ajv | undefined;

function detailedValidator(kind: Kind): ValidateFunction {
  let validate = detailed.get(kind);
  if (!validate) {
    if (!detailedAjv) {
      // ajv is CommonJS: loaded here, synchronously, the first time a manifest is invalid.
      const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      detailedAjv = new AjvClass({
        strict: true,
        strictTypes: false,
        allErrors: true,
        verbose: true,
        code: { optimize: false },
      });
    }
    validate = detailedAjv.compile(MANIFEST_SCHEMAS[kind]);
    detailed.set(kind, validate);
  }
  return validate;
}

/**
 * Checks one document against the JSON Schema of its kind; problems point at the key or value.
 * Only the first LOCATED_PROBLEMS are located (a hostile file may have 50,000); `more` counts the rest.
 */
export function checkSchema(doc: ParsedDocument, kind: Kind): { problems: Problem[]; more: number } {
  if (manifestValidator(kind)(doc.value)) return { problems: [], more: 0 };
  const validate = detailedValidator(kind);
  if (validate(doc.value)) return { problems: [], more: 0 };
  const errors = collapseUnions(validate.errors ?? []);
  const problems = errors.slice(0, LOCATED_PROBLEMS).map((error) => toProblem(doc, error));
  return { problems, more: Math.max(0, errors.length - LOCATED_PROBLEMS) };
}

/** More than validate.ts lists (MAX_PROBLEMS_PER_DOCUMENT), so the ones listed are the first in order. */
const LOCATED_PROBLEMS = 200;

/** A failed `anyOf` yields errors from every branch: keep the branch that got furthest, or the anyOf. */
function collapseUnions(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === "anyOf");
  if (unions.length === 0) return errors;
  const inside = (e: ErrorObject, u: ErrorObject) => e.schemaPath.startsWith(`${u.schemaPath}/`);
  const kept = errors.filter((e) => e.keyword !== "anyOf" && !unions.some((u) => inside(e, u)));
  for (const union of unions) {
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors.filter((e) => inside(e, union))) {
      const branch = e.schemaPath.slice(union.schemaPath.length + 1).split("/")[0] ?? "";
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    // A branch whose errors are all below the union's value matched its shape: report those.
    const matched = [...branches.values()].find((list) =>
      list.every((e) => e.instancePath.length > union.instancePath.length),
    );
    kept.push(...(matched ?? [union]));
  }
  return kept;
}
