import { checkEnvironmentReferences } from "./rules/environment/environment-rules.js";
import { checkSharedControlPlaneNames } from "./rules/environment/environment-names.js";
import type { ParsedDocument } from "./parse/parse.js";
import { isRecord } from "./rules/rule-helpers.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "./types.js";
import { checkDocument, type Seen } from "./validate/check-document.js";
import { nameInDocument, nameInLoaded, toLoaded } from "./validate/loaded-form.js";
import { sortDocuments, sortProblems } from "./validate/problem-order.js";

export { sortProblems } from "./validate/problem-order.js";

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

/** A Deployment whose environment names another document must define (checkEnvironmentReferences). */
function namesEnvironments(doc: ParsedDocument): boolean {
  const { metadata, environments } = doc.value;
  const listed =
    isRecord(metadata) && Array.isArray(metadata.environments) && metadata.environments.length > 0;
  return listed || (isRecord(environments) && Object.keys(environments).length > 0);
}
