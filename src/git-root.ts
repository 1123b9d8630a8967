import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

// Where git would find the repository of a directory, without starting git: the nearest directory
// holding `.git` (a directory, or a worktree's or submodule's file), from `dir` up. Asked by the
// manifest scan (Environments up to the root), the status records' manifest_root and git's own
// "is there a repository at all" (git/inside-repository.ts).

/** The nearest directory holding `.git`, from `dir` (absolute) up; undefined outside a repository. */
export function gitRootOf(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return at;
    if (dirname(at) === at) return undefined;
  }
}
