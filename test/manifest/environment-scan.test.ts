import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mayDefineEnvironments } from "../../src/manifest/environment-scan.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-env-scan-"));
  await mkdir(join(dir, "plain"));
  await mkdir(join(dir, "envs", "nested"), { recursive: true });
  await mkdir(join(dir, "ignored", ".plumb"), { recursive: true });
  await writeFile(
    join(dir, "plain", "a.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\n# kind: Environment in a comment\n",
  );
  await writeFile(
    join(dir, "envs", "nested", "prod.yml"),
    "apiVersion: plumb/v1\nkind: Environment # prod\n",
  );
  await writeFile(join(dir, "ignored", ".plumb", "x.yaml"), "kind: Environment\n");
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe("the quick scan for Environment documents", () => {
  it("finds one in a nested file, and none in a tree without (comments, .plumb/ not counted)", () => {
    expect(mayDefineEnvironments(dir)).toBe(true);
    expect(mayDefineEnvironments(join(dir, "envs", "nested", "prod.yml"))).toBe(true);
    expect(mayDefineEnvironments(join(dir, "plain"))).toBe(false);
    expect(mayDefineEnvironments(join(dir, "ignored"))).toBe(false);
    expect(mayDefineEnvironments(join(dir, "missing"))).toBe(false);
  });
});
