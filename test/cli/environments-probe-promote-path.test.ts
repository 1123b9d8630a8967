import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";

// plumb promote's PATH (docs/environments.md "Promotion"): a path that does not exist is said as
// every command says it (path-not-found), not as "promote takes the directory that holds the
// Environment documents", which a sub-directory below them no longer needs to be; one file is
// refused saying what to pass instead.

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-path-"));
  await writeFile(
    join(dir, "alpha.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: alpha}\n",
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const promote = (path: string) => {
  const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
  return promoteCommand(io).parseAsync([path, "--to", "prod"], { from: "user" });
};

describe("plumb promote's PATH", () => {
  it("that does not exist is path-not-found", async () => {
    await expect(promote(join(dir, "missing"))).rejects.toMatchObject({ code: "path-not-found" });
  });

  it("one file is a usage error pointing at --target", async () => {
    await expect(promote(join(dir, "alpha.yaml"))).rejects.toMatchObject({
      code: "usage",
      message: expect.stringContaining("promote takes a directory") as unknown,
    });
    await expect(promote(join(dir, "alpha.yaml"))).rejects.toThrow(/pass --target NAME/);
  });
});
