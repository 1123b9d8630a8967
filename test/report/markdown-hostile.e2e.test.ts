import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";
import { markupIn } from "./markdown-markup.js";

// A pull request decides the file names and the keys of its manifests, and CI posts plan's
// Markdown as a comment. A file named with a backtick (ending the code span around it) or a key
// quoted in an unknown-field problem put an image, a team mention and HTML in that comment. plumb
// (in the test's process) against the real local control plane: the comment holds them as text only.

const HOSTILE = "a`|<img src=x>![t](https:x) @acme-admins #12 **b**";
const deployment = (extra: string[] = []) =>
  [
    "apiVersion: plumb/v1",
    "kind: Deployment",
    "metadata:",
    "  name: alpha",
    "spec:",
    "  source: internal_container",
    '  source_revision_config: {image_uri: "img/a:1"}',
    ...extra,
    "",
  ].join("\n");

let cp: RunningControlPlane;
let root: string;
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0 });
  root = await mkdtemp(join(tmpdir(), "plumb-md-hostile-"));
});
afterAll(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const plan = (dir: string) =>
  runInProcess(["plan", dir, "--output", "markdown"], {
    PLUMB_API_URL: cp.url,
    PLUMB_API_KEY: DEFAULT_API_KEY,
  });

it("a file name with markup in it is shown as written, as code", async () => {
  const dir = await mkdtemp(join(root, "names-"));
  await writeFile(join(dir, `${HOSTILE}.yaml`), deployment());
  const { code, output } = await plan(dir);
  expect(code).toBe(0);
  expect(output).toContain("+ create");
  expect(output).toContain("@acme-admins");
  expect(markupIn(output)).toEqual([]);
});

it("an unknown key quoted in a problem is shown as text", async () => {
  const dir = await mkdtemp(join(root, "keys-"));
  await writeFile(join(dir, "a.yaml"), deployment([`  "${HOSTILE} <!--": 1`]));
  const { code, output } = await plan(dir);
  expect(code).toBe(1);
  expect(output).toContain("unknown-field");
  expect(output).toContain("@acme-admins");
  expect(markupIn(output)).toEqual([]);
});
