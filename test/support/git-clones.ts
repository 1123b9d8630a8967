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
