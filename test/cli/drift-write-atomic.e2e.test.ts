import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { assertBuilt, runCliWithFileLimit } from "../support/built-cli.js";
import { runInProcess } from "../support/in-process-cli.js";

// drift --write replaces a manifest whole or not at all. It wrote the file in place (truncate, then
// write): on a full disk the write stopped part-way and left the user's manifest cut short, here
// at 4,096 bytes, in the middle of the live value: 'image_uri: ...:1.0.0-with-a', a valid manifest
// of another image, which validate passed and the next apply would have sent. A file-size limit
// (ulimit -f, EFBIG) stands for the full disk, so the write runs in a child: the built CLI.

let cp: RunningControlPlane;
let root: string;

beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  root = await mkdtemp(join(tmpdir(), "plumb-drift-write-atomic-"));
});
afterAll(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

/** A manifest of 4,090 bytes: the live value drift writes back takes it past 4 KiB. */
function manifest(): string {
  const body = [
    "apiVersion: plumb/v1",
    "kind: Deployment",
    "metadata:",
    "  name: tiny",
    "spec:",
    "  source: internal_container",
    "  source_revision_config:",
    "    image_uri: registry.acme.example/t:1.0.0",
    "",
  ].join("\n");
  const comment = `# ${"x".repeat(60)}\n`;
  let padding = comment.repeat(Math.floor((4090 - body.length) / comment.length));
  padding += `#${" ".repeat(4090 - body.length - padding.length - 2)}\n`;
  return padding + body;
}

it("drift --write that cannot write the whole file leaves the manifest as it was", async () => {
  assertBuilt();
  const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  const text = manifest();
  await writeFile(join(root, "m.yaml"), text);
  expect((await runInProcess(["apply", root, "--yes", "--no-wait"], env)).code).toBe(0);
  const client = api(cp.url);
  const { id } = await client.deployment("tiny");
  await client.call("PATCH", `/v2/deployments/${id}`, {
    source_revision_config: { image_uri: "registry.acme.example/t:1.0.0-with-a-much-longer-tag-than-before" },
  });

  const run = runCliWithFileLimit(4, ["drift", root, "--write"], env);
  await expect(run).rejects.toMatchObject({ code: 1 });
  await expect(run).rejects.toThrow("manifest-write-failed");
  expect(await readFile(join(root, "m.yaml"), "utf8")).toBe(text);
  expect((await readdir(root)).filter((f) => f !== ".plumb")).toEqual(["m.yaml"]);
});
