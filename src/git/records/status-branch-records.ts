import type { SimpleGit } from "simple-git";
import { parseObjectStatus } from "../../status/status-store.js";
import { type StatusStore, emptyStatusStore, statusKey } from "../../status/status-types.js";
import { storesBelowInListing } from "../../status/stores-below.js";
import { readBlobs } from "./cat-file-batch.js";

// Reading records off the status branch (load-status-branch.ts): one store's, and the stores below a
// directory (docs/status.md "Stores above and below"): one listing of the branch under it (one
// process, ~6 ms for 1,000 records; an ls-tree per directory was ~1.6 ms each) and one read of
// all their records (cat-file-batch.ts).

/** The repository the records are read from: git, and its top and environment for `cat-file --batch`. */
export type RecordsRepo = { git: SimpleGit; top: string; env: Record<string, string> | undefined };

/**
 * Reads the records under `path` at `ref` into `store`; returns the names listed there. One
 * listing and one `git cat-file --batch` for all of them (a `git show` each was ~2 ms a record:
 * seconds for a store of a few thousand, at every plan with --status-branch).
 */
export async function readRecords(
  repo: RecordsRepo,
  ref: string,
  path: string,
  branch: string,
  store: StatusStore,
): Promise<string[]> {
  const listed = await repo.git.raw(["ls-tree", "-z", "--name-only", `${ref}:${path}`]).catch(() => "");
  const listing = listed.split("\0").filter(Boolean);
  const files = listing.filter((n) => n.endsWith(".json")).map((name) => `${path}/${name}`);
  const texts = await readBlobs(
    repo.top,
    repo.env,
    files.map((file) => `${ref}:${file}`),
  );
  files.forEach((file, i) => {
    const text = texts[i];
    const parsed = text === null || text === undefined ? "not a file on the branch" : parseObjectStatus(text);
    if (typeof parsed === "string") store.problems.push({ file: `${branch}:${file}`, message: parsed });
    else store.objects.set(statusKey(parsed.kind, parsed.name), parsed);
  });
  return listing;
}

/**
 * The stores below the directory `base` of the repository ("" at its root) on `ref`, in the
 * repository at `top`: one `git ls-tree -r` of the branch under it, then their records read by one
 * `git cat-file --batch`. Nearest first, then by path.
 */
export async function readStoresBelow(
  top: string,
  env: Record<string, string> | undefined,
  git: SimpleGit,
  ref: string,
  below: { base: string; environment: string | undefined; branch: string },
): Promise<StatusStore[]> {
  const { base, environment, branch } = below;
  const listed = await git
    .raw(["ls-tree", "-r", "-z", "--name-only", ref, ...(base === "" ? [] : ["--", `${base}/`])])
    .catch(() => "");
  const stores = storesBelowInListing(listed.split("\0").filter(Boolean), base, environment);
  const paths = [...stores.keys()].sort(
    (a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b),
  );
  const files = paths.flatMap((path) => stores.get(path)!.map((name) => `${path}/${name}`));
  const texts = await readBlobs(
    top,
    env,
    files.map((file) => `${ref}:${file}`),
  );
  const byPath = new Map(paths.map((path) => [path, emptyStatusStore()]));
  files.forEach((file, i) => {
    const store = byPath.get(file.slice(0, file.lastIndexOf("/")))!;
    const parsed = parseObjectStatus(texts[i] ?? "");
    if (typeof parsed === "string") store.problems.push({ file: `${branch}:${file}`, message: parsed });
    else store.objects.set(statusKey(parsed.kind, parsed.name), parsed);
  });
  return [...byPath.values()];
}
