import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

// Two machines sharing one git remote, for the tests of the status branch's lease and fenced push:
// a bare `origin.git` in ROOT holding one empty commit on main, and a clone of it per name.

const exec = promisify(execFile);
const IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t"];

/** Returns the clones' paths, in the order of `names`. */
export async function originWithClones(root: string, names = ["runner-a", "runner-b"]): Promise<string[]> {
  const origin = join(root, "origin.git");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", origin]);
  const seed = join(root, "seed");
  await exec("git", ["init", "-q", "--initial-branch=main", seed]);
  await exec("git", ["-C", seed, ...IDENTITY, "commit", "--allow-empty", "-qm", "init"]);
  await exec("git", ["-C", seed, "push", "-q", origin, "main"]);
  const clones: string[] = [];
  for (const name of names) {
    await exec("git", ["clone", "-q", origin, join(root, name)]);
    clones.push(join(root, name));
  }
  return clones;
}

/** `git ARGS` in `cwd` as a committer named t (the tests' commits). */
export const gitIn = (cwd: string, ...args: string[]) =>
  exec("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });

/**
 * A remote a controller follows (`--repo`): a bare `manifests.git` in ROOT with branch main, and a
 * clone `work` on main to write the manifests in; `push` commits everything in it and pushes.
 */
export async function manifestRemote(root: string): Promise<{
  bare: string;
  work: string;
  push: (message: string) => Promise<void>;
}> {
  const bare = join(root, "manifests.git");
  const work = join(root, "work");
  await exec("git", ["init", "--bare", "-b", "main", bare]);
  await exec("git", ["clone", "-q", bare, work]);
  await gitIn(work, "checkout", "-q", "-B", "main");
  const push = async (message: string) => {
    await gitIn(work, "add", "-A");
    await gitIn(work, "commit", "-qm", message);
    await gitIn(work, "push", "-q", "origin", "main");
  };
  return { bare, work, push };
}
