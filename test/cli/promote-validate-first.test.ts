import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";

// plumb promote reports invalid manifests before judging --to: with staging.yaml's kind misspelt,
// `promote --to prod` said "--to prod: no such environment; defined: onprem" (prod, whose
// promotion.from names staging, was dropped with it), a usage error about a file that exists,
// and never named the misspelt kind.

let dir: string;
const env = (name: string, kind = "Environment", extra = "") =>
  `apiVersion: plumb/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n  api_url: http://127.0.0.1:9\n  api_key: {env: KEY}\n${extra}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-validate-first-"));
  await writeFile(join(dir, "staging.yaml"), env("staging", "Environmnt"));
  await writeFile(join(dir, "prod.yaml"), env("prod", "Environment", "  promotion: {from: staging}\n"));
  await writeFile(
    join(dir, "alpha.yaml"),
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: img/alpha:1}\n`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("plumb promote with an invalid Environment document", () => {
  it("names the file, line and problem (invalid-manifests), not --to", async () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: { KEY: "k" } };
    const run = promoteCommand(io).parseAsync([dir, "--to", "prod"], { from: "user" });
    await expect(run).rejects.toMatchObject({ code: "invalid-manifests" });
    await expect(run).rejects.toThrow(/staging\.yaml:2:7: unknown kind "Environmnt"/);
  });
});
