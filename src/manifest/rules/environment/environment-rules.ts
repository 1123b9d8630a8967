import { type ParsedDocument, problemAt } from "../../parse/parse.js";
import { isRecord } from "../rule-helpers.js";
import { PLUMB_CREDENTIAL_VARIABLES } from "../secret-rules.js";
import { suggest } from "../../schema-check.js";
import type { Problem } from "../../types.js";
import { tokenInUrl } from "../../../url-tokens.js";

// Rules of `kind: Environment` that a schema cannot say well, and the references between
// documents: every environment a Deployment names must be defined by an Environment document.

const API_KEY = ["spec", "api_key"] as const;

/** The settings an Environment reads from a variable or a file: they go to its control plane. */
const ENVIRONMENT_CONNECTION_FIELDS = ["api_url", "api_key", "tenant_id", "platform_url"] as const;

/**
 * plumb's own credentials that are not an API key (the git token, the status, webhook and
 * notification secrets): never an Environment's setting. Named there, a merged Environment (its
 * api_url chosen too) sent the controller's git token to a server of its author's choosing.
 * PLUMB_API_KEY stays: it is an API key, the default one.
 */
export const NOT_ENVIRONMENT_SETTINGS: ReadonlySet<string> = new Set(
  [...PLUMB_CREDENTIAL_VARIABLES].filter((variable) => variable !== "PLUMB_API_KEY"),
);

/** The message for an Environment setting that names one of NOT_ENVIRONMENT_SETTINGS. */
export const environmentCredentialMessage = (field: string, variable: string): string =>
  `spec.${field} reads ${variable}, one of plumb's own credentials, which never goes to a control plane; give the environment its own variable`;

/** True for a URL naming a user or a password (`https://user:token@host`): a credential in git. */
export function urlHasCredentials(value: unknown): boolean {
  if (typeof value !== "string" || !URL.canParse(value)) return false;
  const url = new URL(value);
  return url.username !== "" || url.password !== "";
}

/** The URL settings of an Environment that carry credentials (never shown): refused. */
function urlCredentials(doc: ParsedDocument, spec: Record<string, unknown>): Problem[] {
  return (["api_url", "platform_url"] as const).flatMap((field) => {
    const value = spec[field];
    const token = typeof value === "string" ? tokenInUrl(value) : undefined;
    if (!urlHasCredentials(value) && !token) return [];
    const message = `spec.${field} carries credentials (${token ?? "user:password@host"}), which git would keep and plan would print; remove them: the key goes in spec.api_key ({env: VAR} or {file: PATH})`;
    return [
      problemAt(doc.locators.value(["spec", field]), "error", "url-credentials", `spec.${field}`, message),
    ];
  });
}

/**
 * A literal API key in git is refused with its own message (replacing the schema's shape error);
 * a setting read from one of plumb's own credentials other than an API key is refused.
 */
export function checkEnvironmentDocument(doc: ParsedDocument, schemaProblems: Problem[]): Problem[] {
  const spec = isRecord(doc.value.spec) ? doc.value.spec : {};
  const credentials = ENVIRONMENT_CONNECTION_FIELDS.flatMap((field) => {
    const setting = spec[field];
    const variable = isRecord(setting) && typeof setting.env === "string" ? setting.env : undefined;
    if (variable === undefined || !NOT_ENVIRONMENT_SETTINGS.has(variable)) return [];
    const at = doc.locators.value(["spec", field, "env"]);
    const message = environmentCredentialMessage(field, variable);
    return [problemAt(at, "error", "environment-credential", `spec.${field}.env`, message)];
  });
  credentials.push(...urlCredentials(doc, spec));
  if (typeof spec.api_key !== "string") return [...schemaProblems, ...credentials];
  const message =
    "spec.api_key must not be written in git; name where plumb reads it: {env: VAR} or {file: PATH}";
  return [
    ...schemaProblems.filter((p) => p.field !== "spec.api_key"),
    problemAt(doc.locators.value([...API_KEY]), "error", "literal-api-key", "spec.api_key", message),
    ...credentials,
  ];
}

const FROM = ["spec", "promotion", "from"] as const;

const promotedFrom = (doc: ParsedDocument): string | undefined => {
  const spec = isRecord(doc.value.spec) ? doc.value.spec : {};
  const promotion = isRecord(spec.promotion) ? spec.promotion : {};
  return typeof promotion.from === "string" ? promotion.from : undefined;
};

/**
 * Environments whose promotion.from chain comes back to them (prod from staging from prod, or
 * one promoted from itself): a version would have no first place to be verified in. Each
 * environment of a cycle is reported, naming the whole cycle.
 */
function promotionCycles(defined: ReadonlyMap<string, ParsedDocument>): Map<ParsedDocument, string> {
  const found = new Map<ParsedDocument, string>();
  for (const [name, doc] of defined) {
    const chain = [name];
    let next = promotedFrom(doc);
    while (next !== undefined && defined.has(next) && !chain.includes(next) && chain.length <= defined.size) {
      chain.push(next);
      next = promotedFrom(defined.get(next)!);
    }
    if (next !== name) continue;
    const cycle = [...chain, name].join(" <- ");
    found.set(
      doc,
      chain.length === 1
        ? `environment ${name} is promoted from itself; name the environment its versions are verified in first`
        : `promotion.from makes a cycle (${cycle}); one environment of it must be promoted from none or from another`,
    );
  }
  return found;
}

const nameOf = (doc: ParsedDocument): string | undefined => {
  const metadata = isRecord(doc.value.metadata) ? doc.value.metadata : {};
  return typeof metadata.name === "string" ? metadata.name : undefined;
};

/** Reports environment names referenced but not defined, and environments defined twice. */
export function checkEnvironmentReferences(
  environments: readonly ParsedDocument[],
  deployments: readonly ParsedDocument[],
): Map<ParsedDocument, Problem[]> {
  const found = new Map<ParsedDocument, Problem[]>();
  const add = (doc: ParsedDocument, problem: Problem) => found.set(doc, [...(found.get(doc) ?? []), problem]);
  const defined = new Map<string, ParsedDocument>();
  for (const doc of environments) {
    const name = nameOf(doc);
    if (name === undefined) continue;
    const first = defined.get(name);
    if (!first) defined.set(name, doc);
    else {
      const at = `${first.file}:${first.locators.start.line}`;
      const where = doc.locators.value(["metadata", "name"]);
      add(
        doc,
        problemAt(
          where,
          "error",
          "duplicate-name",
          "metadata.name",
          `environment ${name} is already defined at ${at}`,
        ),
      );
    }
  }
  const names = [...defined.keys()];
  const unknown = (doc: ParsedDocument, path: (string | number)[], name: string, at: "key" | "value") => {
    if (defined.has(name)) return;
    const known = names.length > 0 ? `defined: ${names.join(", ")}` : "no Environment document defines any";
    const message = `unknown environment "${name}" (${known})${suggest(name, names)}; add a kind: Environment named ${name} or fix the name`;
    add(doc, problemAt(doc.locators[at](path), "error", "unknown-environment", path.join("."), message));
  };
  for (const doc of environments) {
    const spec = isRecord(doc.value.spec) ? doc.value.spec : {};
    const promotion = isRecord(spec.promotion) ? spec.promotion : {};
    if (typeof promotion.from === "string")
      unknown(doc, ["spec", "promotion", "from"], promotion.from, "value");
  }
  for (const [doc, message] of promotionCycles(defined))
    add(doc, problemAt(doc.locators.value([...FROM]), "error", "promotion-cycle", FROM.join("."), message));
  for (const doc of deployments) {
    const metadata = isRecord(doc.value.metadata) ? doc.value.metadata : {};
    const listed = Array.isArray(metadata.environments) ? metadata.environments : [];
    listed.forEach((name, i) => {
      if (typeof name === "string") unknown(doc, ["metadata", "environments", i], name, "value");
    });
    const overrides = isRecord(doc.value.environments) ? doc.value.environments : {};
    for (const name of Object.keys(overrides)) unknown(doc, ["environments", name], name, "key");
  }
  return found;
}
