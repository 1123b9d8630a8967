import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { unlockCommand } from "../../src/cli/sync/unlock.js";
import { environmentDoc, plain, runCommand, type TwoPlanes } from "./two-planes.js";

// unlock --env X where X's Environment document fails validation said "unknown environment X"
// (exit 64) and never named the problem, as plan, validate and render did before e4f9d73 and
// c8f61f9. It now prints the files' problems (file:line:col) and exits 1. unlock calls no API:
// the planes' URLs are never used.

const NOWHERE = { staging: { url: "http://127.0.0.1:9" }, prod: { url: "http://127.0.0.1:9" } } as TwoPlanes;
let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function repository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "plumb-unlock-invalid-"));
  await mkdir(join(root, "environments"));
  const misspelt = environmentDoc("staging").replace("kind: Environment", "kind: Environmnt");
  await writeFile(join(root, "environments", "staging.yaml"), misspelt);
  await writeFile(join(root, "environments", "prod.yaml"), environmentDoc("prod"));
  await writeFile(join(root, "agent.yaml"), plain("agent"));
  return root;
}

describe("unlock --env naming an Environment document that fails validation", () => {
  it("prints the document's problem and exits 1, not unknown environment", async () => {
    dir = await repository();
    const { out, err, code } = await runCommand(unlockCommand, [dir, "--env", "staging"], NOWHERE);
    expect(code, err).toBe(1);
    expect(out).toMatch(/environments\/staging\.yaml:2:7: error: unknown kind "Environmnt"/);
    expect(out).toContain("nothing unlocked");
    expect(out + err).not.toContain("unknown environment");
  });

  it("an environment that is defined is still unlocked beside the broken one", async () => {
    dir = await repository();
    const { out, code } = await runCommand(unlockCommand, [dir, "--env", "prod"], NOWHERE);
    expect(code).toBe(0);
    expect(out).toContain(`The status store ${join(dir, ".plumb", "status", "prod")} is not locked`);
  });
});
