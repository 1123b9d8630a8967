import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { readYamlDocuments } from "../../src/manifest/parse/yaml-text.js";
import { editValues } from "../../src/manifest/write/edit-values.js";
import { setValues } from "../../src/environment/set-values.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { startPlane } from "../cli/reconcile-helpers.js";

// yaml 3.0.0-2's lexer loops for ever on a lone CR, U+2028 or U+2029 ending a blank, comment or
// directive line before a document (yaml-line-break). The loader refused such files (77f6d77), but
// drift --write read a live value back with yaml before writing it: a value changed in the UI to
// "\r" or "# note\u2028…" hung `plumb drift --write` for good. Every parse of YAML text now goes
// through src/manifest/parse/yaml-text.ts (eslint refuses a direct one). The built CLI runs with a
// deadline, so a hang fails the test instead of stopping the run.

let cp: RunningControlPlane | undefined;
let root = "";
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
  if (root) await rm(root, { recursive: true, force: true });
});

const DEADLINE_MS = 30_000;

/** The built CLI to its end, killed at the deadline (a hang is then a failure, not a stuck run). */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const run = spawnCli(args, env);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), DEADLINE_MS)));
  const code = await Promise.race([run.exited, deadline]);
  clearTimeout(timer);
  if (code === "hung") {
    run.child.kill("SIGKILL");
    await run.exited;
    throw new Error(`plumb ${args[0]} did not return within ${DEADLINE_MS} ms:\n${run.output()}`);
  }
  return { code, output: run.output() };
}

const MANIFEST = `# the docs agent
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: docs
spec:
  source: internal_container
  source_config: {}
  source_revision_config:
    image_uri: "registry.example/docs:1.0" # pinned
`;

describe("drift --write of a live value yaml's lexer cannot read", () => {
  for (const [what, value] of [
    ["a lone CR", "\r"],
    ["a comment line ended by U+2028", "# note\u2028registry.example/docs:2"],
    ["a blank line ended by U+2029", " \u2029registry.example/docs:2"],
  ] as const)
    it(`${what}: written quoted, read back as itself, and plan is then a no-op`, async () => {
      assertBuilt();
      ({ cp, root } = await startPlane());
      const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
      await writeFile(join(root, "docs.yaml"), MANIFEST);
      const apply = await cli(["apply", root, "--yes"], env);
      expect(apply.code, apply.output).toBe(0);
      const headers = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };
      const list = await fetch(`${cp.url}/v2/deployments`, { headers });
      const { resources } = (await list.json()) as { resources: Array<{ id: string; name: string }> };
      const id = resources.find((d) => d.name === "docs")!.id;
      const patched = await fetch(`${cp.url}/v2/deployments/${id}`, {
        method: "PATCH",
        headers,
        body: JSON.stringify({ source_revision_config: { image_uri: value } }),
      });
      expect(patched.status).toBeLessThan(300);

      const drift = await cli(["drift", root, "--write"], env);
      expect(drift.code, drift.output).toBe(2);
      const after = await readFile(join(root, "docs.yaml"), "utf8");
      expect(after).toBe(MANIFEST.replace('"registry.example/docs:1.0"', JSON.stringify(value)));
      const [doc] = readYamlDocuments(after, "docs.yaml");
      expect((doc!.toJS() as { spec: { source_revision_config: { image_uri: string } } }).spec).toMatchObject(
        {
          source_revision_config: { image_uri: value },
        },
      );
      const plan = await cli(["plan", root, "--output", "json"], env);
      expect(plan.code, plan.output).toBe(0);
      expect(plan.output).not.toContain("image_uri");
    });
});

const HOSTILE = `# pasted\u2028${MANIFEST}`;

describe("a file yaml's lexer cannot read, given to the in-place editors", () => {
  const edit = { kind: "Deployment", name: "docs", value: "x" };

  it("is refused with the loader's yaml-line-break message at file:line:col", () => {
    const message = /^docs\.yaml:1:9: a lone carriage return .* \(yaml-line-break\)$/;
    expect(() => editValues(HOSTILE, [{ ...edit, path: ["spec", "source"] }], "docs.yaml")).toThrow(message);
    expect(() => setValues(HOSTILE, [{ ...edit, path: ["spec", "source"] }], "docs.yaml")).toThrow(message);
    expect(() => readYamlDocuments(`\r${MANIFEST}`, "a.yaml")).toThrow(/^a\.yaml:1:1: /);
  });

  it("set a value yaml cannot read (an override of promote or drift --write --env): written quoted", () => {
    const path = ["spec", "source_revision_config", "image_uri"];
    const { text, outcomes } = setValues(MANIFEST, [{ ...edit, path, value: "# x\u2028y" }], "docs.yaml");
    expect(outcomes[0]!.written).toBe(true);
    expect(text).toContain('image_uri: "# x\u2028y" # pinned');
  });

  it("reads a file with CR, U+2028 or U+2029 inside its documents as before", () => {
    const text = `${MANIFEST}  # a\u2028b\n`;
    expect(readYamlDocuments(text, "docs.yaml")).toHaveLength(1);
    expect(readYamlDocuments("", "empty.yaml")).toHaveLength(0);
  });
});
