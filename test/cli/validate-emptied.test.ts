import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { validateCommand } from "../../src/cli/offline/validate.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { gitIn } from "../support/git-clones.js";

// plumb validate and emptied files: alone, a file holding only a conflict marker (or comments, a
// git-lfs pointer, nothing) is a no-documents warning; where the status store beside the manifests
// records a managed object in it, it is the error manifest-emptied and validate exits 1.

const DOC =
  "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/a:1\n";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-validate-emptied-"));
  await writeFile(join(dir, "a.yaml"), DOC);
  await writeFile(join(dir, "b.yaml"), "<<<<<<< HEAD\n");
});
afterEach(async () => {
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function validate() {
  let out = "";
  await validateCommand({ write: (t: string) => (out += t) }).parseAsync(["node", "validate", dir]);
  return { out, code: process.exitCode };
}

const record = (name: string, file: string): ObjectStatus => ({
  kind: "Deployment",
  name,
  id: `id-${name}`,
  latest_revision_id: null,
  active_revision_id: null,
  revision_status: null,
  sync: "Synced",
  health: "Healthy",
  git_commit: null,
  manifest_digest: null,
  secret_fingerprints: null,
  updated_at: new Date(0).toISOString(),
  last_error: null,
  manifest_file: file,
});

it("without records: a clear warning, exit 0", async () => {
  const { out, code } = await validate();
  expect(out).toContain("b.yaml:1:1: warning: file holds a merge-conflict marker");
  expect(out).toContain("[no-documents]");
  expect(code).toBe(0);
});

it("with a record of an object in that file: manifest-emptied naming it, exit 1", async () => {
  await saveObjectStatus(join(dir, ".plumb", "status"), record("beta", "b.yaml"), anyFile);
  const { out, code } = await validate();
  expect(out).toMatch(/b\.yaml:1:1: error: .*Deployment beta.*\[manifest-emptied\]/);
  expect(code).toBe(1);
});

it("with that record committed to git: not plumb's record (docs/status.md), so the warning alone, exit 0", async () => {
  await saveObjectStatus(join(dir, ".plumb", "status"), record("beta", "b.yaml"), anyFile);
  await gitIn(dir, "init", "-q");
  await gitIn(dir, "add", "--force", ".plumb");
  await gitIn(dir, "commit", "-qm", "a committed record");
  const { out, code } = await validate();
  expect(out).not.toContain("[manifest-emptied]");
  expect(out).toContain("[no-documents]");
  expect(code).toBe(0);
});
