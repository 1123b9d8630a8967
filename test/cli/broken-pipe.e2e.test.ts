import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt } from "../support/built-cli.js";

// `plumb --help | head -1`: the reader closes the pipe before plumb writes. plumb must end quietly
// (no EPIPE stack trace on stderr) with the command's own exit code, not crash with 1.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
let cp: RunningControlPlane;

beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ port: 0, revisionSeconds: 0 });
}, 120_000);
afterAll(async () => cp?.stop());

/** Runs the CLI with its stdout pipe closed at once by the reader; its exit code and stderr. */
async function withClosedReader(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: {
      ...process.env,
      NO_COLOR: "1",
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      SAAS_API_URL: cp.url,
      SAAS_API_KEY: DEFAULT_API_KEY,
      OPENAI_API_KEY: "sk-test",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.destroy(); // the reader went away before the first write
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, stderr };
}

describe("a reader that closes the pipe early", () => {
  it.each([
    [["--help"]],
    [["validate", "--help"]],
    [["validate", "examples", "--output", "json"]],
    [["plan", "examples", "--env", "prod", "--output", "json"]],
  ])("plumb %j ends quietly with exit 0", async (args) => {
    const run = await withClosedReader(args);
    expect(run.stderr).not.toMatch(/EPIPE|at \w|unexpected error/);
    expect(run.code).toBe(0);
  });
});
