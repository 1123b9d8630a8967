import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBlobs } from "../../../src/git/records/cat-file-batch.js";

// The records below a tree on the status branch are read by one `git cat-file --batch`.

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe("readBlobs", () => {
  it("reads each file of a ref in order, by bytes; null for one missing or not a file", async () => {
    const repo = await mkdtemp(join(tmpdir(), "plumb-cat-file-"));
    made.push(repo);
    execFileSync("git", ["init", "-q", repo]);
    await mkdir(join(repo, "d"));
    await writeFile(join(repo, "d", "a.json"), '{"name":"équipe"}\n');
    await writeFile(join(repo, "b.json"), "");
    await writeFile(join(repo, "c.json"), "two\nlines");
    execFileSync("git", ["add", "."], { cwd: repo });
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], { cwd: repo });

    const specs = ["HEAD:d/a.json", "HEAD:missing.json", "HEAD:b.json", "HEAD:d", "HEAD:c.json", "HEAD:x\ny"];
    expect(await readBlobs(repo, undefined, specs)).toEqual([
      '{"name":"équipe"}\n',
      null,
      "",
      null,
      "two\nlines",
      null,
    ]);
    expect(await readBlobs(repo, undefined, [])).toEqual([]);
    // A file of gigabytes where a record should be is not read whole: past the bound, an error.
    await expect(readBlobs(repo, undefined, specs, 16)).rejects.toMatchObject({
      code: "status-branch-read-failed",
      message: expect.stringMatching(/larger than 16 bytes in all: .* remove it from the status branch$/),
    });
  });
});
