import { lstatSync, type Stats } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { describeErrno, escapeControls, PlumbError } from "../errors.js";
import { kindOf } from "../regular-file.js";
import { MAX_MANIFEST_BYTES } from "./parse/parse.js";
import { inside, toRelative, type YamlFile } from "./parse/read-file.js";
import type { Problem } from "./types.js";
import { ASYNC, listYamlFiles, skippedTarget, SYNC } from "./list-tree/tree-walk.js";
import { skippedTargetProblem } from "./list-tree/walk-problems.js";

// The listing of a manifest tree (load.ts reads what it lists): every *.yaml / *.yml under PATH in
// reading order, or the one file PATH names, and what the walk met that it does not read (links
// that lead nowhere or out of the tree, loops, what is not a regular file, names it cannot show).

/** How a tree is listed: the size limit its files are read with, and synchronously for a command's parallel load. */
export type ListOptions = { maxBytes?: number; parallel?: boolean };

/** The root's manifest files (one, when `root` names a file), with the problems listing found. */
export async function listManifestFiles(root: string, options: ListOptions) {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const absolute = resolve(root);
  const info = await checkManifestPath(root);
  const base = info.isDirectory() ? absolute : dirname(absolute);
  const realBase = await realpath(base);
  const problems: Problem[] = [];
  const files = info.isDirectory()
    ? inReadingOrder(base, await listYamlFiles(base, realBase, problems, options.parallel ? SYNC : ASYNC))
    : await theFile(absolute, realBase, problems);
  return { files, base, realBase, problems, maxBytes };
}

/** One file as PATH; a link named as PATH (a changed file a CI job validates) leads to a manifest only. */
async function theFile(absolute: string, realBase: string, problems: Problem[]): Promise<YamlFile[]> {
  const real = await realpath(absolute);
  const link = lstatSync(absolute).isSymbolicLink();
  // One outside the directory is refused as outside the root when it is read.
  if (!link || !inside(realBase, real) || !skippedTarget(realBase, real, false))
    return [{ path: absolute, real }];
  problems.push(skippedTargetProblem(basename(absolute)));
  return [];
}

/**
 * PATH as a command or the controller is given it: a directory or a regular file (its stat), else a
 * typed error that says why. A FIFO as PATH blocked the command for ever; a symlink loop was said
 * not to exist.
 */
export async function checkManifestPath(root: string): Promise<Stats> {
  const named = `manifest path ${escapeControls(root)}`;
  const info = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR")
      throw new PlumbError("path-not-found", `${named} does not exist`);
    if (error.code === "ELOOP")
      throw new PlumbError(
        "path-unreadable",
        `${named} is a symlink loop (ELOOP): it never reaches a file or a directory; point it at the manifests`,
      );
    throw new PlumbError(
      "path-unreadable",
      `${named} cannot be read: ${describeErrno(error)}; check its permissions`,
    );
  });
  if (!info.isDirectory() && !info.isFile())
    throw new PlumbError(
      "path-unreadable",
      `${named} is ${kindOf(info)}, not a directory or a regular file; give the manifests' directory or file`,
    );
  return info;
}

/** Sorted as validation reads documents (by the path shown: `team-1.yaml` before `team-1/a.yaml`). */
function inReadingOrder(base: string, files: YamlFile[]): YamlFile[] {
  const shown = new Map(files.map((file) => [file, toRelative(base, file.path)]));
  return files.sort((a, b) => {
    const [x, y] = [shown.get(a)!, shown.get(b)!];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
