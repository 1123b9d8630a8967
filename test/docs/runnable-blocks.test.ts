import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { buildBlockScript, extractRunnableBlocks } from "./runnable-blocks.js";

// The doctest reader for shell blocks: which blocks run, where each command starts, what exit code
// it must give, and that the script really stops on the first command that does not give it.

const doc = [
  "# Title",
  "```sh",
  "plumb controller --dir x   # not marked: never run",
  "```",
  "<!-- runnable -->",
  "",
  "```sh",
  "# a comment line",
  "plumb validate examples",
  "",
  "PLUMB_API_URL=http://127.0.0.1:8123 \\",
  "  plumb plan examples/saas   # exit 2: changes",
  "```",
  "<!-- runnable: doctest-live-edit a '{}' -->",
  "```bash",
  "plumb drift examples --write && git diff examples",
  "```",
].join("\n");

describe("runnable documentation blocks", () => {
  it("takes only marked sh blocks, one command per line (continuations joined), and the exit code a comment names", () => {
    const blocks = extractRunnableBlocks("DOC.md", doc);
    expect(blocks.map((b) => [b.at, b.before])).toEqual([
      ["DOC.md:8", ""],
      ["DOC.md:16", "doctest-live-edit a '{}'"],
    ]);
    expect(blocks[0]!.commands).toEqual([
      { line: 9, text: "plumb validate examples", expectedExit: 0 },
      {
        line: 11,
        text: "PLUMB_API_URL=http://127.0.0.1:8123 \\\n  plumb plan examples/saas   # exit 2: changes",
        expectedExit: 2,
      },
    ]);
    expect(blocks[1]!.commands.map((c) => c.expectedExit)).toEqual([0]);
  });

  it("refuses a marker that no sh block follows, and a block that is never closed", () => {
    expect(() => extractRunnableBlocks("D.md", "<!-- runnable -->\ntext\n")).toThrow(/D\.md:1: .*```sh/);
    expect(() => extractRunnableBlocks("D.md", "<!-- runnable -->\n```sh\nls\n")).toThrow(/never closed/);
  });

  const run = (markdown: string) => {
    const [block] = extractRunnableBlocks("D.md", markdown);
    return spawnSync("bash", ["-c", buildBlockScript(block!)], { encoding: "utf8" });
  };

  it("stops at the first command whose exit code is not the documented one, naming its line", () => {
    // As README's old `plumb drift deploy --write && git diff deploy`: the && list exits 2.
    const failed = run("<!-- runnable -->\n```sh\necho one\n(exit 2) && echo never\necho after\n```\n");
    expect(failed.status).toBe(90);
    expect(failed.stdout).toBe("one\n");
    expect(failed.stderr).toContain("D.md:4 exited 2, expected 0: (exit 2) && echo never");

    const documented = run("<!-- runnable -->\n```sh\n(exit 2)   # exit 2: drift\necho after\n```\n");
    expect(documented.status).toBe(0);
    expect(documented.stdout).toBe("after\n");
    // A documented non-zero code that does not come is a failure too.
    expect(run("<!-- runnable -->\n```sh\ntrue   # exit 2\n```\n").status).toBe(90);
  });

  it("runs the hidden set-up first and fails the block when it fails", () => {
    const script = buildBlockScript(
      extractRunnableBlocks("D.md", "<!-- runnable: X=1; false -->\n```sh\ntrue\n```\n")[0]!,
    );
    expect(() => execFileSync("bash", ["-c", script], { stdio: "pipe" })).toThrow(
      /set-up of D\.md:3 exited 1/,
    );
  });
});
