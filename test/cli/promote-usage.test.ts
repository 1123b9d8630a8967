import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";

// plumb promote's refusals before anything is read from a control plane: flags that contradict,
// an environment that does not exist or has no promotion, a target that is not in both.

let dir: string;
const env = (name: string, extra = "") =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  api_url: http://127.0.0.1:9\n  api_key: {env: KEY}\n${extra}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-usage-"));
  await writeFile(join(dir, "staging.yaml"), env("staging"));
  await writeFile(join(dir, "prod.yaml"), env("prod", "  promotion: {from: staging}\n"));
  await writeFile(
    join(dir, "alpha.yaml"),
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\n  environments: [staging]\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: img/alpha:1}\n`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const promote = (...args: string[]) => {
  const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: { KEY: "k" } };
  return promoteCommand(io).parseAsync([dir, ...args], { from: "user" });
};

describe("plumb promote refuses before reading anything", () => {
  it("contradicting flags are usage errors (exit 64)", async () => {
    await expect(promote("--to", "prod", "--write", "--branch", "b")).rejects.toMatchObject({
      code: "usage",
      exitCode: 64,
      message: "--write and --branch: choose one",
    });
    await expect(promote("--to", "prod", "--dry-run", "--write")).rejects.toMatchObject({ code: "usage" });
    await expect(promote("--to", "qa")).rejects.toThrow(
      "--to qa: no such environment; defined: prod, staging",
    );
  });

  it("--to with a typo suggests the name; control characters in it are printed escaped", async () => {
    await expect(promote("--to", "prdo")).rejects.toThrow(
      '--to prdo: no such environment; defined: prod, staging (did you mean "prod"?)',
    );
    await expect(promote("--to", "prod\n::add-mask::x\u001b[2J")).rejects.toThrow(
      "--to prod\\n::add-mask::x\\u001b[2J: no such environment; defined: prod, staging",
    );
    await expect(promote("--to", "prod", "--target", "a\nb")).rejects.toThrow(
      "--target a\\nb: not a deployment",
    );
  });

  it("an environment without spec.promotion is promotion-not-configured, at its file:line", async () => {
    await expect(promote("--to", "staging")).rejects.toMatchObject({
      code: "promotion-not-configured",
      message: expect.stringContaining(
        "environment staging (staging.yaml:2) has no spec.promotion",
      ) as string,
    });
  });

  it("a --target that does not run in both environments is a usage error", async () => {
    await expect(promote("--to", "prod", "--target", "alpha")).rejects.toThrow(
      "--target alpha: not a deployment of both staging and prod; check the name",
    );
  });
});
