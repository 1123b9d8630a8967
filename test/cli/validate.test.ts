import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";

const EXAMPLES = fileURLToPath(new URL("../../examples", import.meta.url));
const BROKEN = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: web
spec:
  source: gitrepo
  sorce: x
  source_revision_config:
    graph_config_path: langgraph.json
`;
const ROUNDED = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: ops}
spec:
  source: external_container
  source_config:
    resource_spec: {cpu: 0.25}
`;

let dir: string;
let out: string[];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-cli-"));
  out = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => main(["node", "plumb", "validate", ...args]);

describe("plumb validate", () => {
  it("exits 0 on the examples", async () => {
    expect(await run(EXAMPLES)).toBe(0);
    expect(out.join("")).toMatch(/^7 valid manifests, 0 errors, 0 warnings\n$/);
  });

  it("prints FILE:LINE:COL: severity: message [code] and exits 1 on errors", async () => {
    await writeFile(join(dir, "web.yaml"), BROKEN);
    expect(await run(dir)).toBe(1);
    expect(out.join("")).toBe(
      'web.yaml:7:3: error: unknown field "sorce" in spec (did you mean "source"?) [unknown-field]\n' +
        "0 valid manifests, 1 error, 0 warnings\n",
    );
  });

  it("reports an internal_source directory with a link into .git at source_path [source-unsafe-entry]", async () => {
    const doc = `apiVersion: plumb/v1
kind: Deployment
metadata: {name: docs}
spec:
  source: internal_source
  source_path: ./agent
  source_revision_config: {graph_config_path: langgraph.json}
`;
    await writeFile(join(dir, "docs.yaml"), doc);
    await mkdir(join(dir, ".git"));
    await mkdir(join(dir, "agent"));
    await writeFile(join(dir, ".git/config"), "[core]\n");
    await writeFile(join(dir, "agent/package.json"), "{}");
    expect(await run(dir)).toBe(0);
    await symlink("../.git", join(dir, "agent/g"));
    out.length = 0;
    expect(await run(dir)).toBe(1);
    expect(out.join("")).toBe(
      "docs.yaml:6:3: error: source_path agent/g is a symlink that leaves agent; remove it, or copy what it needs into agent [source-unsafe-entry]\n" +
        "1 valid manifest, 1 error, 0 warnings\n",
    );
  });

  it("warnings alone exit 0", async () => {
    await writeFile(join(dir, "ops.yaml"), ROUNDED);
    expect(await run(dir)).toBe(0);
    expect(out.join("")).toContain("ops.yaml:7:26: warning: cpu 0.25 has more than one decimal");
  });

  it("--output json prints the problems with their fields", async () => {
    await writeFile(join(dir, "web.yaml"), BROKEN);
    await writeFile(join(dir, "ops.yaml"), ROUNDED);
    expect(await run(dir, "--output", "json")).toBe(1);
    const parsed = JSON.parse(out.join(""));
    expect(parsed).toEqual({
      problems: [
        {
          file: "ops.yaml",
          line: 7,
          column: 26,
          severity: "warning",
          code: "cpu-rounded",
          field: "spec.source_config.resource_spec.cpu",
          message: "cpu 0.25 has more than one decimal; the control plane rounds it to 0.3",
        },
        {
          file: "web.yaml",
          line: 7,
          column: 3,
          severity: "error",
          code: "unknown-field",
          field: "spec.sorce",
          message: 'unknown field "sorce" in spec (did you mean "source"?)',
        },
      ],
    });
  });

  it("an unknown output format is a usage error", async () => {
    expect(await run(dir, "--output", "yaml")).toBe(64);
  });

  it("a missing path is an error with a code", async () => {
    expect(await run(join(dir, "missing"))).toBe(1);
  });
});
