import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";

// A status store is state, never manifests (README: keep `.plumb/` out of git). A record committed
// to the repository is not one plumb wrote: anyone whose commit lands can name any live deployment
// in it, and apply --prune in a fresh clone, or a controller with --prune following the branch,
// would delete that deployment as one plumb created. So the records git tracks are ignored, as an
// unreadable record is, and said. Outside a work tree (or without git) nothing is tracked.

const TRACKED_RECORD =
  "tracked by git, so not trusted as plumb's own record (one committed to the repository could name any deployment for --prune): " +
  "untrack the store (git rm -r --cached .plumb) and add .plumb/ to .gitignore";

/** The `*.json` names directly in `dir` that git tracks, each with why it is ignored. */
export async function trackedRecords(dir: string): Promise<Map<string, string>> {
  const names = await readdir(dir).catch(() => [] as string[]);
  // A store without records costs no git process (every fresh clone, every first apply).
  if (!names.some((n) => n.endsWith(".json"))) return new Map();
  const listed = await new Promise<string>((resolve) => {
    execFile(
      "git",
      ["ls-files", "-z", "--", "."],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => resolve(error ? "" : stdout),
    );
  });
  const tracked = listed.split("\0").filter((n) => n.endsWith(".json") && !n.includes("/"));
  return new Map(tracked.map((name) => [name, TRACKED_RECORD]));
}
