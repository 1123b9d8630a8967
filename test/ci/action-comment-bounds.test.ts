import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAction } from "./action-runner.js";

// action.yml's plumb step puts plumb's stderr in the pull request's comment when plumb fails. It
// appended the whole file inside a ``` fence: a 1 MB log made a comment GitHub refuses (65,536
// characters at most), so the plan was not shown at all, and a log line ``` closed the fence. The
// step's own `with_reason` function is run here with bash, on the text action.yml holds.

const run = promisify(execFile);
let dir: string;
let withReason: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-action-comment-"));
  const action = await readAction("action.yml");
  const script = action.runs.steps.find((s) => s.name === "plumb")?.run ?? "";
  withReason = /^with_reason\(\) \{\n[\s\S]*?^\}\n/m.exec(script)?.[0] ?? "";
  expect(withReason).toContain("with_reason()");
});

afterAll(() => rm(dir, { recursive: true, force: true }));

/** The comment after plumb wrote `plan` on stdout and `err` on stderr and exited 1. */
async function commentAfter(plan: string, err: string): Promise<string> {
  await writeFile(join(dir, "comment.md"), plan);
  await writeFile(join(dir, "err"), err);
  await run("bash", ["-euo", "pipefail", "-c", `out=${dir}\n${withReason}\nwith_reason 1 plan`]);
  return readFile(join(dir, "comment.md"), "utf8");
}

describe("action.yml: plumb's log in the comment", () => {
  it("keeps the comment under GitHub's limit whatever the log's size", async () => {
    const line = "x".repeat(999);
    const comment = await commentAfter("## plan\n", `${line}\n`.repeat(1_000));
    expect(comment.length).toBeLessThan(65_536);
    expect(comment).toContain("plumb plan exited 1");
    // The end of the log: 40 lines of at most 300 bytes, indented.
    expect(comment).toContain(`    ${"x".repeat(300)}\n`);
    expect(comment).not.toContain("x".repeat(301));
  });

  it("says where the log is when the plan itself leaves no room", async () => {
    const comment = await commentAfter(`${"p".repeat(63_990)}\n`, "plumb: failed\n");
    expect(comment.length).toBeLessThan(65_536);
    expect(comment).toContain("its log is in the job log");
    expect(comment).not.toContain("plumb: failed");
  });

  it("never opens a fence a log line could close", async () => {
    const comment = await commentAfter("## plan\n", "```\n@someone look\n");
    expect(comment).not.toMatch(/^```/m);
    expect(comment).toContain("    @someone look");
  });
});
