import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { resolve } from "node:path";
import { escapeControls, PlumbError } from "../../errors.js";
import { insideRepository } from "../inside-repository.js";

// A status store is state, never manifests (README: keep `.plumb/` out of git). A record committed
// to the repository is not one plumb wrote: anyone whose commit lands can name any live deployment
// in it, and apply --prune in a fresh clone, or a controller with --prune following the branch,
// would delete that deployment as one plumb created. So the records git tracks are ignored, as an
// unreadable record is, and said. Outside a repository (no `.git` in the store's directory or
// above it, no GIT_DIR) nothing can be tracked: no answer from git is needed. Inside one, git must
// answer: when it fails (not installed, "detected dubious ownership", a broken .git) plumb cannot
// tell a committed record from its own, and refuses (status-tracking-unknown) rather than trust
// them all (docs/status.md "Records are state, never manifests").

const TRACKED_RECORD =
  "tracked by git, so not trusted as plumb's own record (one committed to the repository could name any deployment for --prune): " +
  "untrack the store (git rm -r --cached .plumb) and add .plumb/ to .gitignore";

/** The `*.json` names directly in `dir` that git tracks, each with why it is ignored; status-tracking-unknown when git cannot say. */
export async function trackedRecords(dir: string): Promise<Map<string, string>> {
  const names = await readdir(dir).catch(() => [] as string[]);
  // A store without records costs no git process (every fresh clone, every first apply), nor does
  // one outside a repository (git could only fail there).
  if (!names.some((n) => n.endsWith(".json")) || !insideRepository(dir)) return new Map();
  const listed = await new Promise<{ stdout: string; failed?: string }>((done) => {
    execFile(
      "git",
      ["ls-files", "-z", "--", "."],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        done(error ? { stdout: "", failed: gitFailure(error, String(stderr)) } : { stdout }),
    );
  });
  if (listed.failed !== undefined) throw trackingUnknown(dir, listed.failed);
  const tracked = listed.stdout.split("\0").filter((n) => n.endsWith(".json") && !n.includes("/"));
  return new Map(tracked.map((name) => [name, TRACKED_RECORD]));
}

/**
 * trackedRecords of the store `dir`, asked again only once git's index changed (a file git tracks
 * changes only with it: add, rm, commit, checkout, reset, pull each write a new index file). A writer
 * asks before it lets the file at a record's path count (status-source.ts's ownRecordsIn): at every
 * write that meets a file, so a git process each time was one per record written (thousands at a
 * controller's start); here it is a stat of the index. The answer is kept by the function returned,
 * so by whoever holds it (a command's run, a controller's status book), for its one store: never by
 * the process for every store of that path (a store that a `git init` nested in another repository
 * was answered for with the outer repository's index). Outside a repository nothing is tracked and
 * git is not run; when git cannot say (or where its index is), its failure is thrown each time, as
 * trackedRecords.
 */
export function trackedRecordsKept(dir: string): () => Promise<ReadonlyMap<string, string>> {
  /** The last answer: git's index then (its path and stamp). */
  let known: { index: string; stamp: string; tracked: Map<string, string> } | undefined;
  return async () => {
    // The kept answer first: one stat per write (the controller's writes into a checkout ask each time).
    if (known && indexStamp(known.index) === known.stamp) return known.tracked;
    if (!insideRepository(dir)) return new Map();
    const index = known?.index ?? (await indexOf(dir));
    const stamp = index === undefined ? undefined : indexStamp(index); // before git reads it
    const tracked = await trackedRecords(dir);
    if (index !== undefined && stamp !== undefined) known = { index, stamp, tracked };
    return tracked;
  };
}

/** The path of the index git reads for `dir` (GIT_DIR, GIT_INDEX_FILE, a worktree's own); undefined when git cannot say. */
const indexOf = (dir: string): Promise<string | undefined> =>
  new Promise((done) => {
    execFile("git", ["rev-parse", "--git-path", "index"], { cwd: dir }, (error, stdout) =>
      done(error ? undefined : resolve(dir, stdout.trim())),
    );
  });

/** Which index file is there now: a new one (git writes index.lock, then renames it) has another. */
function indexStamp(index: string): string {
  try {
    const stat = statSync(index, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return "none"; // a repository with nothing added yet: the first add writes one
  }
}

/**
 * The names directly in `dir` of the files git tracks there (the state lock's directory:
 * lock/committed-lock.ts); undefined when git cannot say (no repository, git missing or failing).
 */
export async function trackedNamesIn(dir: string): Promise<Set<string> | undefined> {
  if (!insideRepository(dir)) return undefined;
  const listed = await new Promise<string | undefined>((done) => {
    execFile("git", ["ls-files", "-z", "--", "."], { cwd: dir, maxBuffer: 1024 * 1024 }, (error, stdout) =>
      done(error ? undefined : stdout),
    );
  });
  if (listed === undefined) return undefined;
  return new Set(listed.split("\0").filter((n) => n.length > 0 && !n.includes("/")));
}

/** git's own first line (control characters escaped), or why it did not run. */
function gitFailure(error: NodeJS.ErrnoException | Error, stderr: string): string {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return "git is not installed (not found on PATH)";
  const line = stderr
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return escapeControls(line ?? error.message);
}

const trackingUnknown = (dir: string, why: string) =>
  new PlumbError(
    "status-tracking-unknown",
    `cannot tell which status records in ${dir} git tracks (git ls-files failed: ${why}): a record committed to the repository is not trusted as plumb's own, and without git's answer none can be. ` +
      "Fix git there (install it; for 'dubious ownership': git config --global --add safe.directory <the repository>, or run as the repository's owner), " +
      "or keep the store outside the repository (--status-dir DIR)",
  );
