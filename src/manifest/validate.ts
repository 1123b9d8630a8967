import { DOCUMENT_KINDS, type Manifest } from "../schema/manifest.js";
import { checkEnvironmentDocument, checkEnvironmentReferences } from "./rules/environment-rules.js";
import { type ParsedDocument, problemAt } from "./parse/parse.js";
import { checkDeploymentRules } from "./rules/rules.js";
import { checkSchema, suggest } from "./schema-check.js";
import { checkAnnotations } from "./rules/annotation-rules.js";
import { checkTextCharacters } from "./rules/text-rules.js";
import type { LoadedEnvironment, LoadedManifest, Problem, SourceLocation } from "./types.js";

export type ValidationResult = {
  /** Documents without any error, in file order; warnings do not exclude a document. */
  manifests: LoadedManifest[];
  /** The valid `kind: Environment` documents (docs/environments.md); none in most repositories. */
  environments?: LoadedEnvironment[];
  /** Every problem, sorted by file, line and column. */
  problems: Problem[];
};

/** Problems listed per document; the rest are counted in one `too-many-problems` warning. */
export const MAX_PROBLEMS_PER_DOCUMENT = 100;

const KINDS = DOCUMENT_KINDS;
const isKind = (kind: unknown): kind is (typeof KINDS)[number] => KINDS.some((k) => k === kind);
const showLocation = (l: SourceLocation) => `${l.file}:${l.line}:${l.column}`;

/** Validates parsed plumb documents: schema, business rules, then rules across files. Pure. */
export function validateDocuments(
  documents: readonly ParsedDocument[],
  earlier: readonly Problem[] = [],
): ValidationResult {
  const steps = validating(documents, earlier);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The same validation in steps (one per document), for a caller that must not hold its thread for
 * all of them at once: the controller loads in its event loop and yields between slices (load.ts).
 */
export function* validating(
  documents: readonly ParsedDocument[],
  earlier: readonly Problem[] = [],
): Generator<void, ValidationResult> {
  const problems: Problem[] = [...earlier];
  const failed = new Set<ParsedDocument>();
  /** `unlocated`: problems found but not located (checkSchema), counted with the ones not shown. */
  const add = (doc: ParsedDocument, found: Problem[], unlocated = 0) => {
    if (found.some((p) => p.severity === "error")) failed.add(doc);
    if (found.length <= MAX_PROBLEMS_PER_DOCUMENT && unlocated === 0) return void problems.push(...found);
    // A hostile file can hold 50,000 unknown keys: show the first ones and say how many more.
    const shown = sortProblems(found).slice(0, MAX_PROBLEMS_PER_DOCUMENT);
    const more = found.length - shown.length + unlocated;
    const message = `${more} more problems in this document are not shown; fix the ones above first`;
    const after = shown.at(-1)!; // listed right after the last one shown
    problems.push(...shown, { ...after, severity: "warning", code: "too-many-problems", field: "", message });
  };
  const names = new Map<string, ParsedDocument>();
  let organizationAccess: ParsedDocument | undefined;
  const environmentDocs: ParsedDocument[] = [];
  const deploymentDocs: ParsedDocument[] = [];

  for (const doc of sortDocuments(documents)) {
    const kind = doc.value.kind;
    if (!isKind(kind)) {
      const message =
        typeof kind === "string"
          ? `unknown kind "${kind}"; expected ${KINDS.join(" or ")}${suggest(kind, KINDS)}`
          : `a plumb document needs kind: ${KINDS.join(" or ")}`;
      add(doc, [problemAt(doc.locators.value(["kind"]), "error", "unknown-kind", "kind", message)]);
      continue;
    }
    const schema = checkSchema(doc, kind);
    const schemaProblems =
      kind === "Environment" ? checkEnvironmentDocument(doc, schema.problems) : schema.problems;
    const found = [...schemaProblems, ...checkTextCharacters(doc), ...checkAnnotations(doc)];
    if (kind === "Environment") environmentDocs.push(doc);
    if (kind === "Deployment") deploymentDocs.push(doc);
    if (kind === "Deployment") found.push(...checkDeploymentRules(doc));
    const name = nameOf(doc);
    if (kind === "Deployment" && name !== undefined) {
      // Case-insensitively: status files are named after it, and would collide on macOS or Windows.
      const first = names.get(name.toLowerCase());
      if (first) {
        const at = showLocation(first.locators.value(["metadata", "name"]));
        const other = nameOf(first);
        const message =
          other === name
            ? `deployment ${name} is already defined at ${at}`
            : `deployment ${name} differs only by case from ${other} at ${at}; names must be unique ignoring case`;
        found.push(
          problemAt(
            doc.locators.value(["metadata", "name"]),
            "error",
            "duplicate-name",
            "metadata.name",
            message,
          ),
        );
      } else names.set(name.toLowerCase(), doc);
    }
    if (kind === "OrganizationAccess") {
      if (organizationAccess) {
        const message = `only one OrganizationAccess is allowed; another is at ${showLocation(organizationAccess.locators.start)}`;
        found.push(problemAt(doc.locators.start, "error", "duplicate-organization-access", "kind", message));
      } else organizationAccess = doc;
    }
    add(doc, found, schema.more);
    yield;
  }
  for (const [doc, found] of checkEnvironmentReferences(environmentDocs, deploymentDocs)) add(doc, found);
  const valid = sortDocuments(documents).filter((doc) => !failed.has(doc));
  const manifests = valid.filter((doc) => doc.value.kind !== "Environment").map((doc) => toLoaded(doc));
  if (environmentDocs.length === 0) return { manifests, problems: sortProblems(problems) };
  const environments = valid
    .filter((doc) => doc.value.kind === "Environment")
    .map((doc) => toLoaded(doc) as unknown as LoadedEnvironment);
  return { manifests, environments, problems: sortProblems(problems) };
}

const nameOf = (doc: ParsedDocument): string | undefined => {
  const metadata = doc.value.metadata;
  const name =
    typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : undefined;
};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const sortDocuments = (documents: readonly ParsedDocument[]) =>
  [...documents].sort((a, b) => compareText(a.file, b.file) || a.index - b.index);

/** Problems in reading order: file, line, column, then errors before warnings. */
export const sortProblems = (problems: readonly Problem[]): Problem[] =>
  [...problems].sort(
    (a, b) =>
      compareText(a.file, b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      compareText(a.severity, b.severity) ||
      compareText(a.code, b.code),
  );

function toLoaded(doc: ParsedDocument): LoadedManifest {
  return {
    // The schema check passed, so the value has the manifest's shape.
    manifest: doc.value as unknown as Manifest,
    file: doc.file,
    // A getter: positions are computed only when asked for (see parseManifestText).
    get location() {
      return doc.locators.start;
    },
    locate: doc.locators.key,
    locateValue: doc.locators.value,
  };
}
