import { resolve } from "node:path";
import { gitRootOf } from "../git-root.js";

// Whether git could find a repository for `dir`, answered without starting git: a `.git` (a
// directory, or the file of a worktree or submodule) in `dir` or above it, or GIT_DIR set. Outside
// one, every git command plumb would run for it (the commit a run records, the records git tracks,
// the repository root of a report) fails, so none is started: a process each, and the first one
// loads simple-git, about 60 ms of a plumb command's start. GIT_CEILING_DIRECTORIES only ever
// narrows git's search, so a "no" here is git's "no" too. A bare repository (no work tree, no
// `.git`) holds no manifests: a directory in one is taken as outside.

/** Is `dir` in a git repository as git would look for one: a `.git` in it or above, or GIT_DIR set. */
export function insideRepository(dir: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.GIT_DIR) || gitRootOf(resolve(dir)) !== undefined;
}
