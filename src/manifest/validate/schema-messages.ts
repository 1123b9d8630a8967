import type { ErrorObject } from "ajv";
import {
  C_IDENTIFIER_PATTERN,
  DEPLOYMENT_NAME_PATTERN,
  DNS_LABEL_PATTERN,
  UUID_PATTERN,
  CPU_FIELDS,
} from "../../schema/constants.js";
import { type ParsedDocument, problemAt } from "../parse/parse.js";
import type { Problem } from "../types.js";
import { formatField, pointerToPath } from "./field-path.js";
import { suggest } from "./suggest.js";

// A JSON Schema error (ajv's, of the detailed validator: schema-check.ts) said in words, at the key
// or value it is about: one message per keyword.

const NAME_RULES: Record<string, string> = {
  [DEPLOYMENT_NAME_PATTERN]: "a letter first, then letters, digits and '-', at most 63 characters",
  [DNS_LABEL_PATTERN]: "a DNS label: lowercase letters, digits and '-', a letter or digit at each end",
  [C_IDENTIFIER_PATTERN]: "a C identifier: letters, digits and '_', not starting with a digit",
};

const withArticle = (type: string): string =>
  type === "null" ? "null" : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
const show = (value: unknown): string => (value === undefined ? "nothing" : JSON.stringify(value));
const describeType = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "number") return withArticle(typeof value);
  if (Number.isNaN(value)) return "not-a-number (.nan)";
  if (!Number.isFinite(value)) return "infinity (.inf)";
  return Number.isInteger(value) ? `the number ${value}` : `the fraction ${value}`;
};

/** What every keyword's message needs: where the error is, its value, schema and parameters. */
type ErrorSite = {
  doc: ParsedDocument;
  error: ErrorObject;
  path: Array<string | number>;
  field: string;
  where: string;
  value: ReturnType<ParsedDocument["locators"]["value"]>;
  schema: NonNullable<ErrorObject["parentSchema"]>;
  params: Record<string, unknown>;
  last: string | number | undefined;
};

export function toProblem(doc: ParsedDocument, error: ErrorObject): Problem {
  const path = pointerToPath(error.instancePath);
  const field = formatField(path);
  const where = field || "the document";
  const value = doc.locators.value(path);
  const schema = error.parentSchema ?? {};
  const params = error.params as Record<string, unknown>;
  const site: ErrorSite = { doc, error, path, field, where, value, schema, params, last: path.at(-1) };
  switch (error.keyword) {
    case "additionalProperties":
      return unknownFieldProblem(site);
    case "required":
      return missingFieldProblem(site);
    case "type":
      return typeProblem(site);
    case "enum":
    case "const":
      return enumProblem(site);
    case "pattern":
    case "maxLength":
      return patternProblem(site);
    case "minLength":
      return problemAt(value, "error", "invalid-value", field, `${where} must not be empty`);
    case "minimum":
    case "maximum":
      return rangeProblem(site);
    case "anyOf": {
      const expected = typeof schema.description === "string" ? `: ${schema.description}` : "";
      return problemAt(value, "error", "invalid-value", field, `${where} has an invalid shape${expected}`);
    }
    default:
      return problemAt(value, "error", "invalid-value", field, `${where} ${error.message ?? "is invalid"}`);
  }
}

function unknownFieldProblem({ doc, path, where, schema, params }: ErrorSite): Problem {
  const key = String(params.additionalProperty);
  const known = Object.keys((schema.properties as object | undefined) ?? {});
  const message = `unknown field "${key}" in ${where}${suggest(key, known)}${whyNotHere(doc, key)}`;
  return problemAt(
    doc.locators.key([...path, key]),
    "error",
    "unknown-field",
    formatField([...path, key]),
    message,
  );
}

/** Why a field a user may expect from other kinds is not one of this kind's. */
function whyNotHere(doc: ParsedDocument, key: string): string {
  const kind = (doc.value as { kind?: unknown } | null)?.kind;
  if (kind !== "OrganizationAccess" || key !== "environments") return "";
  return ": an OrganizationAccess is the same in every environment, and plan and apply plan it in each one against that environment's organization (docs/manifests.md)";
}

function missingFieldProblem({ doc, path, where, params }: ErrorSite): Problem {
  const key = String(params.missingProperty);
  const at = path.length === 0 ? doc.locators.start : doc.locators.key(path);
  return problemAt(at, "error", "missing-field", formatField([...path, key]), `${where} is missing "${key}"`);
}

/** True at a secret's literal `value` (spec.secrets[N].value, an override's or defaults' too). */
const isSecretValue = (path: ReadonlyArray<string | number>): boolean =>
  path.at(-1) === "value" && typeof path.at(-2) === "number" && path.at(-3) === "secrets";

function typeProblem({ error, path, where, value, field, params, last }: ErrorSite): Problem {
  const types = String(params.type).split(",").map(withArticle).join(" or ");
  // A secret's value is never printed, not even a PIN written unquoted and read as a number.
  if (isSecretValue(path) && error.data !== null && typeof error.data !== "object") {
    const message = `${where} must be ${types}, not a ${typeof error.data} (its value not shown: it is a secret); quote it in the manifest`;
    return problemAt(value, "error", "invalid-type", field, message);
  }
  let message = `${where} must be ${types}, not ${describeType(error.data)}`;
  if (CPU_FIELDS.some((f) => f === last) && typeof error.data === "string") {
    message += "; CPU is a number of cores, e.g. 0.5 (not 500m)";
  }
  const yaml11 = yaml11Boolean(params.type, error.data);
  if (yaml11 !== undefined) {
    message += `; "${String(error.data)}" is text in YAML 1.2 (a boolean only in YAML 1.1): write ${yaml11}`;
  }
  return problemAt(value, "error", "invalid-type", field, message);
}

/** YAML 1.1's spellings of true and false, which YAML 1.2 (plumb's, and the schema's) reads as text. */
const YAML11_BOOLEANS = /^(?:(y|yes|on)|(n|no|off))$/i;

/** "true" or "false" for a string a YAML 1.1 author meant as that boolean, where a boolean is wanted. */
function yaml11Boolean(type: unknown, data: unknown): string | undefined {
  if (typeof data !== "string" || !String(type).split(",").includes("boolean")) return undefined;
  const match = YAML11_BOOLEANS.exec(data);
  return match ? (match[1] ? "true" : "false") : undefined;
}

function enumProblem({ error, where, value, field, params }: ErrorSite): Problem {
  const allowed = (params.allowedValues as unknown[] | undefined) ?? [params.allowedValue];
  const words = allowed.filter((a): a is string => typeof a === "string");
  const hint = typeof error.data === "string" ? suggest(error.data, words) : "";
  const message = `${where} is ${show(error.data)}; expected ${allowed.map(show).join(", ")}${hint}`;
  return problemAt(value, "error", "invalid-value", field, message);
}

/** A name rule, a UUID, or another format: said in words rather than as a regular expression. */
function patternProblem({ error, where, value, field, schema }: ErrorSite): Problem {
  const rule = NAME_RULES[String(schema.pattern)];
  if (rule)
    return problemAt(value, "error", "invalid-name", field, `${where} ${show(error.data)} must be ${rule}`);
  if (schema.pattern === UUID_PATTERN) {
    return problemAt(value, "error", "invalid-format", field, `${where} ${show(error.data)} is not a UUID`);
  }
  return problemAt(value, "error", "invalid-format", field, `${where} ${error.message ?? "is invalid"}`);
}

function rangeProblem({ error, where, value, field, schema, last }: ErrorSite): Problem {
  const isCpu = CPU_FIELDS.some((f) => f === last);
  const unit = isCpu ? " cores" : "";
  const message =
    schema.maximum === undefined
      ? `${where} ${show(error.data)} must be at least ${String(schema.minimum)}${unit}`
      : `${where} ${show(error.data)} is out of range (${String(schema.minimum ?? "-")} to ${String(schema.maximum)}${unit})`;
  return problemAt(value, "error", isCpu ? "cpu-out-of-range" : "out-of-range", field, message);
}
