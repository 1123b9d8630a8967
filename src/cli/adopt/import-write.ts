import { existsSync, lstatSync, statSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileError, PlumbError, UsageError } from "../../errors.js";
import { replaceFileText } from "../../manifest/write/replace-file.js";

// `plumb import`: where the files go. All or nothing: anything in the way is refused before the
// first file is written, and each file is written whole or not at all.

/**
 * --out is a directory (made when missing): one that names a file is refused before any request.
 * The import read every deployment and then failed to mkdir it with a bare EEXIST (an internal
 * error, exit 70).
 */
export function refuseFileAsOut(out: string): void {
  if (existsSync(out) && !statSync(out).isDirectory())
    throw new UsageError(
      `--out ${out} is a file: import writes one NAME.yaml per deployment into a directory; name a directory (made when missing)`,
    );
}

/**
 * Two objects for one file (a deployment named organization-access with --organization, two live
 * deployments of one name), or for names that differ only in case (Alpha and alpha): refused
 * before anything is written. The second write failed half-way through the import, or, with
 * --force, replaced the first's file; and files that differ only in case are one file on macOS
 * and Windows (a clone keeps one of them).
 */
export function refuseSameFile(
  out: string,
  files: ReadonlyArray<{ file: string; what: string; object: string }>,
): void {
  const seen = new Map<string, { file: string; what: string; object: string }>();
  for (const f of files) {
    const first = seen.get(f.file.toLowerCase());
    if (first === undefined) {
      seen.set(f.file.toLowerCase(), f);
      continue;
    }
    const where =
      first.file === f.file
        ? `would both be written to ${join(out, f.file)}`
        : `would be written to ${join(out, first.file)} and ${join(out, f.file)}, one file where case does not count (macOS, Windows)`;
    const fix =
      first.object === f.object
        ? "the control plane lists two deployments of that name; rename or delete one there"
        : first.file === f.file
          ? "import the deployments without --organization, and the organization into another --out"
          : "import one of them with --name into another --out";
    throw new PlumbError("file-exists", `${first.what} and ${f.what} ${where}; nothing was written: ${fix}`, {
      exitCode: 1,
    });
  }
}

/**
 * All or nothing: a file in the way stops the import before anything is written; with --force, one
 * that is not a regular file (a symbolic link, a directory) does too. --force replaced a link's
 * target, wherever it pointed (../../.github/workflows/deploy.yml: outside --out), and a directory
 * or a dangling link failed half-way through the import, the files before it written.
 */
export function refuseInTheWay(out: string, files: ReadonlyArray<{ file: string }>, force: boolean): void {
  const kindOf = (path: string) => lstatSync(path, { throwIfNoEntry: false });
  const inTheWay = files.map((f) => join(out, f.file)).filter((path) => kindOf(path) !== undefined);
  const plural = (paths: string[], one: string, many: string) => (paths.length === 1 ? one : many);
  if (inTheWay.length > 0 && !force)
    throw new PlumbError(
      "file-exists",
      `${inTheWay.join(", ")} already exist${plural(inTheWay, "s", "")}; nothing was written (--force overwrites)`,
      { exitCode: 1 },
    );
  const special = inTheWay.filter((path) => !kindOf(path)!.isFile());
  if (special.length > 0)
    throw new PlumbError(
      "file-exists",
      `${special.join(", ")} ${plural(special, "is not a regular file", "are not regular files")} (a symbolic link, a directory): --force replaces only regular files; nothing was written: move ${plural(special, "it", "them")} away first`,
      { exitCode: 1 },
    );
}

/**
 * One imported file, whole or not at all: a file in the way (--force) is replaced by a rename, a
 * new one removed when its write fails. Written in place, a full disk cut the user's file short
 * (its content lost) and failed as an internal error.
 */
export async function writeImported(path: string, text: string, force: boolean): Promise<void> {
  const fail = (error: unknown) =>
    fileError("manifest-write-failed", path, error, "import writes into --out");
  if (force && existsSync(path))
    return replaceFileText(path, text, undefined).catch((error: unknown) => Promise.reject(fail(error)));
  await writeFile(path, text, { flag: "wx" }).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") await rm(path, { force: true });
    throw fail(error);
  });
}
