import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { openGitSource } from "../../src/git/git-source.js";

// The controller's poll asks for a fetch every --interval, a webhook at any time. A fetch that takes
// longer than the interval (a slow remote, a loaded machine; the tests poll every 50 ms) had every
// poll during it run it once more, so it never ended: the new commit was never answered (nor
// scanned, nor applied). Requests during a fetch now share one more fetch after it.

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd })).stdout.trim();

let tmp: string;
afterEach(async () => {
  // Retried: a git process that the hundreds of fetches started on their own (git's automatic
  // maintenance runs detached, outside the fetch's process group) may still be writing in the
  // checkout's .git: CI's Node 20 run once failed here with ENOTEMPTY.
  await rm(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

it("polls far more frequent than a fetch: a new commit is answered by the fetch that sees it", async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-git-polls-"));
  const origin = join(tmp, "origin.git");
  const author = join(tmp, "author");
  await git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", origin);
  await git(tmp, "clone", "--quiet", origin, author);
  const commit = async (tag: string) => {
    await writeFile(join(author, "app.yaml"), `image: ${tag}\n`);
    await git(author, "add", ".");
    await git(author, "commit", "--quiet", "-m", tag);
    await git(author, "push", "--quiet", "origin", "HEAD:main");
    return git(author, "rev-parse", "HEAD");
  };
  await commit("0");
  const source = await openGitSource({
    url: origin,
    branch: "main",
    workDir: join(tmp, "co"),
    env: process.env,
  });
  try {
    // A request every millisecond: every fetch (git processes: tens of ms) has many during it.
    let requests = 0;
    let answered = () => {};
    const moved = new Promise<void>((resolve) => (answered = resolve));
    const poll = setInterval(() => {
      requests++;
      void source.fetch().then(
        (yes) => yes && answered(),
        () => undefined,
      );
    }, 1);
    const newer = await commit("1");
    // The next fetch answers it (well under a second; 20 s on a loaded machine is a hang): without
    // the fix, no answer came for as long as the requests did.
    let bound: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      bound = setTimeout(() => reject(new Error(`no answer after ${requests} requests`)), 20_000);
    });
    await Promise.race([moved, hang]).finally(() => {
      clearInterval(poll);
      clearTimeout(bound);
    });
    expect(source.commit(), `after ${requests} requests`).toBe(newer);
  } finally {
    await source.close();
  }
});
