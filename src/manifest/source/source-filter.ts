import { readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

// What of an internal_source directory is never uploaded (docs/manifests.md "Source uploads"):
// - `.git` (a directory or a worktree's `.git` file), anywhere: repository metadata holds tokens;
// - what `.gitignore` files exclude: those from the manifest root down to the source directory and
//   those inside it, each for the paths under its own directory, a deeper one winning (as git does);
// - by default `.env*`, `*.pem`, `*.key`, `id_*` and the package managers' and tools' credential
//   files (`.npmrc`, `.yarnrc.yml`, `.pypirc`, `.netrc`, `.git-credentials`, `*.p12`, `*.pfx`): an
//   `.npmrc` usually carries a registry `_authToken`;
// - what `.plumbignore` at the top of the source directory excludes (read last: `!NAME` there
//   takes a default back);
// - installed dependencies and plumb's own status (`node_modules`, `.plumb`), as before.
// Files behind a `valueFrom.file` secret are left out by their real path (source-tree.ts).

/** Never packed, whatever an ignore file says. */
const NEVER_PACKED: ReadonlySet<string> = new Set([".git"]);
/** Directories skipped as before: the build installs dependencies; plumb's status is not source. */
const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(["node_modules", ".plumb"]);
/** Credentials by their usual names; `.plumbignore` may re-include one with `!NAME`. */
const DEFAULT_EXCLUDES = [
  ...[".env*", "*.pem", "*.key", "id_*", "*.p12", "*.pfx"],
  ...[".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", ".git-credentials"],
];

/** One ignore file's rules; `local` turns a source-relative path into one relative to its directory. */
type Layer = { rules: Ignore; local: (path: string) => string | null };

/** Paths relative to the source directory, '/' separators. */
export type SourceFilter = {
  excluded(path: string, isDirectory: boolean): boolean;
  /** Reads the `.gitignore` of a directory inside the source (`prefix`: its path and a '/'). */
  enter(prefix: string, realDir: string): Promise<void>;
};

const readIgnoreFile = (dir: string, name: string): Promise<string> =>
  readFile(join(dir, name), "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "EISDIR" || error.code === "ENOTDIR") return "";
    throw error;
  });

const toPosix = (path: string) => path.split(sep).join("/");

/** The filter of the source directory `dir` inside the manifest root `root` (both real paths). */
export async function loadSourceFilter(root: string, dir: string): Promise<SourceFilter> {
  const gitignores: Layer[] = [];
  // The manifest root and every directory down to the source directory, itself included.
  const steps = toPosix(relative(root, dir)).split("/").filter(Boolean);
  for (let i = 0; i <= steps.length; i++) {
    const text = await readIgnoreFile(join(root, ...steps.slice(0, i)), ".gitignore");
    const below = steps
      .slice(i)
      .map((s) => `${s}/`)
      .join("");
    if (text) gitignores.push({ rules: ignore().add(text), local: (path) => `${below}${path}` });
  }
  const defaults = ignore().add(DEFAULT_EXCLUDES);
  const plumbignore = ignore().add(await readIgnoreFile(dir, ".plumbignore"));

  return {
    async enter(prefix, realDir) {
      if (prefix === "") return; // the source directory's own .gitignore is read above
      const text = await readIgnoreFile(realDir, ".gitignore");
      if (text)
        gitignores.push({
          rules: ignore().add(text),
          local: (path) => (path.startsWith(prefix) ? path.slice(prefix.length) : null),
        });
    },
    excluded(path, isDirectory) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      if (NEVER_PACKED.has(name)) return true;
      if (isDirectory && SKIPPED_DIRECTORIES.has(name)) return true;
      const as = (p: string) => (isDirectory ? `${p}/` : p);
      let ignored = false;
      for (const layer of [...gitignores, { rules: defaults, local: (p: string) => p }]) {
        const local = layer.local(path);
        if (!local) continue;
        const verdict = layer.rules.test(as(local));
        if (verdict.ignored) ignored = true;
        else if (verdict.unignored) ignored = false;
      }
      const last = plumbignore.test(as(path));
      return last.ignored || (ignored && !last.unignored);
    },
  };
}

/** True when a path relative to the source directory goes through a `.git` entry. */
export const insideGit = (path: string): boolean =>
  path.split("/").some((segment) => NEVER_PACKED.has(segment));
