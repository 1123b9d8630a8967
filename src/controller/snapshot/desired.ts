import { createHash } from "node:crypto";
import type { LoadResult } from "../../manifest/load.js";
import type { LoadedManifest, Problem } from "../../manifest/types.js";
import { canonicalJson } from "../../apply/status-record.js";
import { statusKey } from "../../status/status-types.js";

// What git (or the directory) says, as the controller holds it between scans. Pure.

type DesiredEntry = {
  loaded: LoadedManifest;
  /**
   * sha256 of the whole document, literal secret values included, plus the content digest of its
   * internal_source directory: memory only, never logged or stored.
   */
  digest: string;
};

export type DesiredSnapshot = {
  /** Valid objects by status key ("Deployment/NAME"). */
  objects: Map<string, DesiredEntry>;
  /** Error problems by file: those documents are left out until fixed. */
  invalid: Map<string, Problem[]>;
  /** Real paths of every manifest's `valueFrom.file` secrets: never part of a source upload. */
  secretFiles?: ReadonlySet<string>;
  /** One environment's: files of Deployments that do not run in it (prune: removed, not emptied). */
  elsewhere?: readonly string[];
};

export type SnapshotChanges = {
  /** New or edited objects: reconcile these. */
  changed: string[];
  /** Objects no longer in the manifests (deleted, or now invalid). */
  removed: string[];
  /** Files whose errors appeared, changed or were fixed. */
  problemsChanged: boolean;
};

export const emptySnapshot = (): DesiredSnapshot => ({ objects: new Map(), invalid: new Map() });

const documentDigest = (loaded: LoadedManifest, content?: string): string => {
  const hash = createHash("sha256").update(canonicalJson(loaded.manifest));
  if (content !== undefined) hash.update(`\0${content}`);
  return hash.digest("hex");
};

/** `contents`: by status key, what else the object is built from (its source directory's digest). */
export function buildSnapshot(result: LoadResult, contents?: ReadonlyMap<string, string>): DesiredSnapshot {
  const objects = new Map<string, DesiredEntry>();
  for (const loaded of result.manifests) {
    const key = statusKey(loaded.manifest.kind, loaded.manifest.metadata.name);
    objects.set(key, { loaded, digest: documentDigest(loaded, contents?.get(key)) });
  }
  const invalid = new Map<string, Problem[]>();
  for (const problem of result.problems) {
    if (problem.severity !== "error") continue;
    const list = invalid.get(problem.file) ?? [];
    list.push(problem);
    invalid.set(problem.file, list);
  }
  return { objects, invalid, ...(result.elsewhere?.length ? { elsewhere: result.elsewhere } : {}) };
}

/** Which objects must be reconciled after a rescan: only those whose document digest changed. */
export function diffSnapshots(before: DesiredSnapshot, after: DesiredSnapshot): SnapshotChanges {
  const changed: string[] = [];
  for (const [key, entry] of after.objects) {
    if (before.objects.get(key)?.digest !== entry.digest) changed.push(key);
  }
  const removed = [...before.objects.keys()].filter((key) => !after.objects.has(key));
  const problemsOf = (s: DesiredSnapshot) =>
    JSON.stringify([...s.invalid.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { changed, removed, problemsChanged: problemsOf(before) !== problemsOf(after) };
}
