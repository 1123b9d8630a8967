import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";

// An object's error in a plan is one line of printable text. A secret's `valueFrom.file` may hold
// a line break (validate accepts the path's text), and the error naming the missing file printed
// it as written: in plan's text and Markdown output (a pull-request comment, a CI log) the rest
// of the path became a line of its own, a GitHub Actions workflow command ("::warning::...").

let cp: RunningControlPlane;
let root: string;
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0 });
  root = await mkdtemp(join(tmpdir(), "plumb-error-lines-"));
  await writeFile(
    join(root, "a.yaml"),
    [
      "apiVersion: plumb/v1",
      "kind: Deployment",
      "metadata:",
      "  name: a",
      "spec:",
      "  source: internal_container",
      '  source_revision_config: {image_uri: "img/a:1"}',
      "  secrets:",
      "    - name: S",
      '      valueFrom: {file: "nope\\n::warning::injected"}',
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

it.each(["text", "markdown", "json"])(
  "plan --output %s keeps an error's line break escaped",
  async (output) => {
    const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
    const { code, output: printed } = await runInProcess(["plan", root, "--output", output], env);
    expect(code).toBe(1);
    expect(printed).toContain("nope\\n::warning::injected");
    expect(printed).not.toMatch(/^::warning::/m);
    expect(printed).not.toContain("\u001b");
  },
);

it("drift's text keeps a not-checked object's error on one line", async () => {
  const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  const { code, output: printed } = await runInProcess(["drift", root], env);
  expect(code).toBe(1);
  expect(printed).toContain("nope\\n::warning::injected");
  expect(printed).not.toMatch(/^::warning::/m);
});

it("apply's outcome and status's last error keep it on one line", async () => {
  const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  for (const args of [
    ["apply", root, "--yes"],
    ["apply", root, "--yes", "--output", "markdown"],
    ["status", root],
  ]) {
    const { output: printed } = await runInProcess(args, env);
    expect(printed).toContain("nope\\n::warning::injected");
    expect(printed).not.toMatch(/^::warning::/m);
  }
});
