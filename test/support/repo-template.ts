import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Git repositories made once per test file and copied per test: a recursive copy is the same
// repositories (objects, refs, index, config), for none of the git processes that made them (2-3 ms
// of CPU each, a clone or push more). Only a path inside a repository's config names where it is:
// a clone's remote.origin.url, rewritten to the copy's. (A copied index's file times differ from
// the files': git looks at those files again, and finds them the same.)

export type RepoTemplate = {
  /** Copies the repositories into `dir` (made if missing), as `make` left them in its directory. */
  copyTo(dir: string): Promise<void>;
  /** Removes the template's own directory (afterAll). */
  remove(): Promise<void>;
};

/** `make(dir)` runs once, at the first copy, in a directory of its own. */
export function repoTemplate(make: (dir: string) => Promise<unknown>): RepoTemplate {
  let made: Promise<string> | undefined;
  const build = async () => {
    const dir = await mkdtemp(join(tmpdir(), "plumb-repo-template-"));
    await make(dir);
    return dir;
  };
  return {
    async copyTo(dir) {
      const from = await (made ??= build());
      await cp(from, dir, { recursive: true });
      await rewriteConfigs(from, dir);
    },
    async remove() {
      const dir = await made?.catch(() => undefined);
      made = undefined;
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The configs of the repositories at `dir` and one level below it (bare or not), `from` → `dir`. */
async function rewriteConfigs(from: string, dir: string) {
  const entries = await readdir(dir, { withFileTypes: true });
  const repos = [dir, ...entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name))];
  const configs = repos.flatMap((repo) => [join(repo, "config"), join(repo, ".git", "config")]);
  for (const config of configs) {
    const text = await readFile(config, "utf8").catch(() => undefined);
    if (text?.includes(from)) await writeFile(config, text.replaceAll(from, dir));
  }
}
