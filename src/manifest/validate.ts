import { DOCUMENT_KINDS } from "../schema/constants.js";
import type { Manifest } from "../schema/manifest.js";
import {
  checkEnvironmentDocument,
  checkEnvironmentReferences,
} from "./rules/environment/environment-rules.js";
import { checkSharedControlPlaneNames } from "./rules/environment/environment-names.js";
import { type ParsedDocument, problemAt } from "./parse/parse.js";
import { checkDeploymentRules } from "./rules/rules.js";
import { isRecord } from "./rules/rule-helpers.js";
import { checkSchema, suggest } from "./schema-check.js";
import { checkAnnotations } from "./rules/annotation-rules.js";
import { checkTextCharacters } from "./rules/text-rules.js";
import { checkProtoKeys } from "./rules/proto-key-rules.js";
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
  const validation = createValidation(earlier);
  for (const doc of sortDocuments(documents)) validation.add(doc);
  return validation.finish();
}

/** Turns each manifest that passed into what the caller keeps (the controller's compact form). */
export type Compact = (loaded: LoadedManifest) => LoadedManifest;

/** A document's outcome, in reading order: kept (passed), or decided once every file is read. */
type Entry = { loaded: LoadedManifest } | { pending: ParsedDocument };

export type Validation = {
  /** The next document, in reading order (file, then position in the file: sortDocuments). */
  add(doc: ParsedDocument): void;
  /** The next file's parse, in reading order: its problems (reading, parsing) and its documents. */
  addFile(parsed: { documents: readonly ParsedDocument[]; problems: readonly Problem[] }): void;
  /** No Environment document was read, and Deployments so far name environments (or `requested`: an environment was asked for by name). */
  lacksEnvironments(requested?: boolean): boolean;
  finish(): ValidationResult;
};

/**
 * Validation one document at a time, fed in reading order: a document that passes is turned into
 * its loaded form at once (and through `compact`, when given), so the parsed document can go while
 * the rest of the tree is read. Only what a later document may change is kept whole until
 * `finish`: Environment documents and the Deployments that name environments (their references are
 * checked across files). The result is validateDocuments' for the same documents.
 */
export function createValidation(earlier: readonly Problem[] = [], compact?: Compact): Validation {
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
  const seen: Seen = { names: new Map() };
  const environmentDocs: ParsedDocument[] = [];
  const referencing: ParsedDocument[] = [];
  const entries: Entry[] = [];

  const validation: Validation = {
    addFile(parsed) {
      problems.push(...parsed.problems);
      for (const doc of sortDocuments(parsed.documents)) validation.add(doc);
    },
    add(doc) {
      const { found, more, first } = checkDocument(doc, seen);
      add(doc, found, more);
      const kind = doc.value.kind;
      if (kind === "Environment") environmentDocs.push(doc);
      const pending = kind === "Environment" || (kind === "Deployment" && namesEnvironments(doc));
      let loaded: LoadedManifest | undefined;
      if (pending) {
        referencing.push(doc);
        entries.push({ pending: doc });
      } else if (!failed.has(doc)) {
        loaded = compact ? compact(toLoaded(doc)) : toLoaded(doc);
        entries.push({ loaded });
      }
      // Where the first one's name is, read when a second one needs it (a compact form re-reads it).
      if (first !== undefined)
        seen.names.set(first.toLowerCase(), {
          name: first,
          at: loaded ? nameInLoaded(loaded) : nameInDocument(doc),
        });
    },
    lacksEnvironments: (requested = false) =>
      environmentDocs.length === 0 && (requested || referencing.length > 0),
    finish() {
      const deployments = referencing.filter((doc) => doc.value.kind === "Deployment");
      for (const [doc, found] of checkEnvironmentReferences(environmentDocs, deployments)) add(doc, found);
      const collisions = checkSharedControlPlaneNames(environmentDocs, deployments, seen.names);
      problems.push(...collisions.map((c) => c.problem));
      const colliding = new Set(collisions.map((c) => c.name));
      const manifests: LoadedManifest[] = [];
      const environments: LoadedEnvironment[] = [];
      for (const entry of entries) {
        if ("loaded" in entry) manifests.push(entry.loaded);
        else if (failed.has(entry.pending)) continue;
        else if (entry.pending.value.kind === "Environment")
          environments.push(toLoaded(entry.pending) as unknown as LoadedEnvironment);
        else manifests.push(compact ? compact(toLoaded(entry.pending)) : toLoaded(entry.pending));
      }
      if (environmentDocs.length === 0) return { manifests, problems: sortProblems(problems) };
      // A Deployment whose name another one takes on a shared control plane is left out, as a
      // duplicate name's is: the controller reconciles neither copy of that one live deployment.
      const kept = colliding.size === 0 ? manifests : manifests.filter((m) => !isColliding(m, colliding));
      return { manifests: kept, environments, problems: sortProblems(problems) };
    },
  };
  return validation;
}

const isColliding = (loaded: LoadedManifest, colliding: ReadonlySet<string>) =>
  loaded.manifest.kind === "Deployment" && colliding.has(loaded.manifest.metadata.name);

/** What the documents read so far defined that a later one may repeat. */
type Seen = {
  /** The first Deployment of each name (lowercased): its name and where its name's value is. */
  names: Map<string, { name: string; at: () => SourceLocation }>;
  organizationAccess?: SourceLocation;
};

/** One document's own problems (schema, rules) and the names it repeats; `first`: a name it defines. */
function checkDocument(doc: ParsedDocument, seen: Seen): { found: Problem[]; more: number; first?: string } {
  const kind = doc.value.kind;
  if (!isKind(kind)) {
    const message =
      typeof kind === "string"
        ? `unknown kind "${kind}"; expected ${KINDS.join(" or ")}${suggest(kind, KINDS)}`
        : `a plumb document needs kind: ${KINDS.join(" or ")}`;
    return {
      found: [problemAt(doc.locators.value(["kind"]), "error", "unknown-kind", "kind", message)],
      more: 0,
    };
  }
  const schema = checkSchema(doc, kind);
  const schemaProblems =
    kind === "Environment" ? checkEnvironmentDocument(doc, schema.problems) : schema.problems;
  // A document read from plain text (line-compose.ts) holds no control character and no __proto__ key.
  const found = [
    ...schemaProblems,
    ...(doc.plainText ? [] : checkTextCharacters(doc)),
    ...checkAnnotations(doc),
    ...(doc.plainText ? [] : checkProtoKeys(doc)),
  ];
  if (kind === "Deployment") found.push(...checkDeploymentRules(doc));
  const name = nameOf(doc);
  let first: string | undefined;
  if (kind === "Deployment" && name !== undefined) {
    // Case-insensitively: status files are named after it, and would collide on macOS or Windows.
    const earlierOne = seen.names.get(name.toLowerCase());
    if (earlierOne) {
      const at = showLocation(earlierOne.at());
      const message =
        earlierOne.name === name
          ? `deployment ${name} is already defined at ${at}`
          : `deployment ${name} differs only by case from ${earlierOne.name} at ${at}; names must be unique ignoring case`;
      found.push(
        problemAt(
          doc.locators.value(["metadata", "name"]),
          "error",
          "duplicate-name",
          "metadata.name",
          message,
        ),
      );
    } else first = name;
  }
  if (kind === "OrganizationAccess") {
    if (seen.organizationAccess) {
      const message = `only one OrganizationAccess is allowed; another is at ${showLocation(seen.organizationAccess)}`;
      found.push(problemAt(doc.locators.start, "error", "duplicate-organization-access", "kind", message));
    } else seen.organizationAccess = doc.locators.start;
  }
  return { found, more: schema.more, first };
}

// Closures of their own, so that one kept for a compacted manifest does not keep its parsed document.
const NAME_PATH = ["metadata", "name"];
const nameInLoaded = (loaded: LoadedManifest) => () =>
  loaded.locateValue ? loaded.locateValue(NAME_PATH) : loaded.locate(NAME_PATH);
const nameInDocument = (doc: ParsedDocument) => () => doc.locators.value(NAME_PATH);

/** A Deployment whose environment names another document must define (checkEnvironmentReferences). */
function namesEnvironments(doc: ParsedDocument): boolean {
  const { metadata, environments } = doc.value;
  const listed =
    isRecord(metadata) && Array.isArray(metadata.environments) && metadata.environments.length > 0;
  return listed || (isRecord(environments) && Object.keys(environments).length > 0);
}

const nameOf = (doc: ParsedDocument): string | undefined => {
  const metadata = doc.value.metadata;
  const name =
    typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : undefined;
};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Reading order: by file, then by position in the file. */
const sortDocuments = (documents: readonly ParsedDocument[]) =>
  documents.length < 2
    ? documents
    : [...documents].sort((a, b) => compareText(a.file, b.file) || a.index - b.index);

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
