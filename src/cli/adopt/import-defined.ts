import { join } from "node:path";
import { PlumbError } from "../../errors.js";
import type { LoadResult } from "../../manifest/load.js";
import type { ObjectStatus } from "../../status/status-types.js";

// `plumb import` into a directory that already holds manifests (docs/import.md, "Safety"): an
// object the repository defines in another file is left alone, and a file that --force would
// replace must define nothing but the object imported into it.

/** One file import would write: `object` is what it defines ("Deployment NAME", "OrganizationAccess"). */
type Planned = { file: string; object: string };

const objectOf = (kind: string, name: string): string =>
  kind === "OrganizationAccess" ? kind : `${kind} ${name}`;

/** Where the repository defines each object: "Deployment NAME" → FILE:LINE (and the file). */
function definitions(tree: LoadResult | undefined): Map<string, { file: string; at: string }> {
  const defined = new Map<string, { file: string; at: string }>();
  for (const m of tree?.manifests ?? []) {
    const object = objectOf(m.manifest.kind, m.manifest.metadata.name);
    if (!defined.has(object)) defined.set(object, { file: m.file, at: `${m.file}:${m.location.line}` });
  }
  return defined;
}

/**
 * The files to write without those whose object is already defined in another file (each said on
 * stdout): a second definition (duplicate-name, duplicate-organization-access) made the whole
 * repository fail validation, so plan, apply and the controller stopped on it. Without --force, nor
 * those defined in the very file import would write: a second import (for the deployments made
 * since) was refused whole by the files of the first (file-exists), and --force replaced them all,
 * the team's edits with them.
 */
export function withoutDefined<T extends Planned>(
  tree: LoadResult | undefined,
  files: readonly T[],
  options: { force: boolean; stdout: { write(text: string): unknown } },
): T[] {
  const { stdout } = options;
  const defined = definitions(tree);
  return files.filter((f) => {
    const where = defined.get(f.object);
    if (where === undefined || (where.file === f.file && options.force)) return true;
    stdout.write(
      `skipped ${f.object}: already defined at ${where.at}; nothing is written for it (plumb plan shows how live differs)\n`,
    );
    return false;
  });
}

/**
 * --force replaces a file whole: one that also defines other objects would lose them without a
 * word. Refused before anything is written.
 */
export function refuseSharedFiles(
  tree: LoadResult | undefined,
  out: string,
  files: readonly Planned[],
): void {
  for (const f of files) {
    const others = [...(tree?.manifests ?? []), ...(tree?.environments ?? [])]
      .filter((m) => m.file === f.file && objectOf(m.manifest.kind, m.manifest.metadata.name) !== f.object)
      .map((m) => `${objectOf(m.manifest.kind, m.manifest.metadata.name)} (line ${m.location.line})`);
    if (others.length > 0)
      throw new PlumbError(
        "file-exists",
        `${join(out, f.file)} also defines ${others.join(", ")}, which --force would delete; nothing was written: move ${others.length === 1 ? "it" : "them"} to another file first`,
        { exitCode: 1 },
      );
  }
}

/**
 * The files to write without those of objects plumb already applies from another directory: a
 * status store above `out` (up to the git root) or below it records them as applied (docs/status.md
 * "Stores above and below"), and `out` does not define them. Import read those stores and wrote the
 * manifest anyway: two directories then applied (and pruned) one deployment, and the repository
 * root's plan failed on duplicate-name. A record of another deployment id (one deleted and made
 * again under the name) does not count.
 */
export function withoutManagedNearby<T extends Planned & { what: string; liveName?: string; id: string }>(
  tree: LoadResult | undefined,
  files: readonly T[],
  nearby: ReadonlyMap<string, ObjectStatus>,
  where: { out: string; stdout: { write(text: string): unknown } },
): T[] {
  const defined = definitions(tree);
  const records = [...nearby.values()];
  const managed = (f: T) =>
    f.object === "OrganizationAccess"
      ? records.some((r) => r.kind === "OrganizationAccess")
      : records.some((r) => r.kind === "Deployment" && r.name === f.liveName && (!r.id || r.id === f.id));
  return files.filter((f) => {
    if (defined.has(f.object) || !managed(f)) return true;
    where.stdout.write(
      `skipped ${f.what}: plumb already applies it from another directory (a status store above or below ${where.out} records it); nothing is written for it: a second manifest would have two directories apply and prune it\n`,
    );
    return false;
  });
}
