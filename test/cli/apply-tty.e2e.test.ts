import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { containerDoc, writeManifests } from "../reconcile/harness.js";
import { assertBuilt } from "../support/built-cli.js";
import { startPlane } from "./reconcile-helpers.js";

// `plumb apply` as a user runs it on a terminal: the built CLI in a child process under a
// pseudo-terminal (util-linux `script`), against the local control plane. It must ask before
// sending, then show the live progress view (redrawn lines, ✓ per finished object), not log lines.

const hasScript = spawnSync("script", ["--version"]).status === 0;
// dist/ is built once per run, before any test file (test/global-setup.ts): nothing rewrites it
// while this test runs.
const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");

let cp: RunningControlPlane;
let root: string;

beforeAll(async () => {
  if (!hasScript) return;
  assertBuilt();
  // Each revision state lasts 50 ms, so the view has statuses to show while apply waits.
  ({ cp, root } = await startPlane({ revisionSeconds: 0.05 }));
  await writeManifests(root, [
    containerDoc("tty-a", "registry.example/a:1"),
    containerDoc("tty-b", "registry.example/b:1"),
  ]);
}, 60_000);
afterAll(async () => {
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs `plumb apply ROOT` on a pseudo-terminal; `answer` is typed once the prompt shows. */
async function applyOnTerminal(answer: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, MAIN, "apply", root, "--timeout", "30s"]
    .map((part) => `'${part.replace(/'/g, `'\\''`)}'`)
    .join(" ");
  // -q quiet, -e exit with the child's code, -f flush at once; the typescript file is /dev/null.
  const child: ChildProcess = spawn("script", ["-qefc", command, "/dev/null"], {
    env: {
      PATH: process.env.PATH,
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      NO_COLOR: "1",
      TERM: "xterm",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let raw = "";
  let answered = false;
  const onData = (chunk: Buffer) => {
    raw += chunk.toString("utf8");
    if (!answered && raw.includes("Only 'yes' will be accepted: ")) {
      answered = true;
      child.stdin?.write(`${answer}\n`);
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`apply did not finish on the terminal; screen so far:\n${raw}`));
    }, 30_000);
    child.on("exit", (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, screen: raw };
}

// Redraws move the cursor up and clear: keep the text, drop the control sequences and \r.
const plain = (screen: string) => stripVTControlCharacters(screen).replace(/\r/g, "");

describe.skipIf(!hasScript)(
  `plumb apply on a terminal${hasScript ? "" : " (skipped: util-linux `script` is not installed)"}`,
  () => {
    it("sends nothing when the answer is not yes", async () => {
      const { code, screen } = await applyOnTerminal("no");
      const text = plain(screen);
      expect(text).toContain("+ create Deployment tty-a");
      expect(text).toContain("Apply 2 changes? Only 'yes' will be accepted: ");
      expect(text).toContain("Apply cancelled: nothing was sent.");
      expect(code).toBe(1);
      const list = await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": DEFAULT_API_KEY } });
      expect(((await list.json()) as { resources: unknown[] }).resources).toHaveLength(0);
    });

    it("asks, then shows live progress lines and a ✓ per deployment, exit 0", async () => {
      const { code, screen } = await applyOnTerminal("yes");
      const text = plain(screen);
      expect(text).toContain("Apply 2 changes? Only 'yes' will be accepted: yes");
      // The live view: one line per object in flight (phase, then the revision status while waiting,
      // elapsed), a count line,
      expect(text).toMatch(/^ {2}… tty-a {2}sending {2}\d+\.\ds$/m);
      expect(text).toMatch(/^ {2}… tty-[ab] {2}waiting [A-Z_]+ {2}\d+\.\ds$/m);
      // counting the changes the prompt named,
      expect(text).toMatch(/\d of 2 changes done, \d+ in progress/);
      expect(text).toContain("2 of 2 changes done, 0 in progress");
      // redrawn in place (cursor up + clear), and finished objects as ✓ lines, never plain log lines.
      expect(screen).toContain("\u001b[2A\u001b[0J");
      expect(text).toMatch(/✓ Deployment tty-a converged revision \S+ DEPLOYED in/);
      expect(text).toMatch(/✓ Deployment tty-b converged revision \S+ DEPLOYED in/);
      expect(text).not.toContain("apply: Deployment");
      expect(text).toContain("Apply complete: 2 converged");
      expect(code).toBe(0);
    });
  },
);
