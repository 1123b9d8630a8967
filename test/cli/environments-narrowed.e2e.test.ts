import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { environmentDoc, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// A Deployment whose metadata.environments drops an environment no longer runs there: for that
// environment it is removed from git (docs/environments.md "Narrowing metadata.environments"). The
// file still exists and still defines it elsewhere, so it is not an emptied file: drift reports it
// removed, plan lists it, apply --prune deletes it there alone. It was manifest-emptied, and apply
// --prune reported no changes.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let repo: string;

const deployment = (name: string, environments?: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: ${name}
${environments ? `  environments: [${environments}]\n` : ""}spec:
  source: internal_container
  source_revision_config: {image_uri: "img/${name}:1"}
`;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  repo = await mkdtemp(join(tmpdir(), "plumb-env-narrowed-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await mkdir(join(repo, "agents"));
  await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(join(repo, "environments", "prod.yaml"), environmentDoc("prod"));
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(repo, { recursive: true, force: true });
});

type Run = typeof planCommand | typeof applyCommand | typeof driftCommand;
const run = (command: Run, args: string[]) => runCommand(command, args, { staging, prod });
const names = async (cp: RunningControlPlane, key: string, only?: readonly string[]) =>
  (await api(cp.url, key).deployments())
    .map((d) => d.name)
    .filter((n) => !only || only.includes(n))
    .sort();

type DriftJson = { environments: Array<{ items: Array<{ name: string; reason: string }> }> };
const removedIn = (out: string) =>
  (JSON.parse(out) as DriftJson).environments.flatMap((e) =>
    e.items.filter((i) => i.reason === "removed-from-git").map((i) => i.name),
  );

describe("narrowing metadata.environments", () => {
  it("drift reports it removed, plan lists it, apply --prune deletes it in that environment only", async () => {
    const dir = join(repo, "agents");
    await writeFile(join(dir, "a.yaml"), deployment("a", "staging, prod"));
    await writeFile(join(dir, "b.yaml"), deployment("b"));
    for (const env of ["staging", "prod"])
      expect((await run(applyCommand, [dir, "--env", env, "--yes"])).code).toBe(0);
    expect(await names(prod, PROD_KEY)).toEqual(["a", "b"]);

    await writeFile(join(dir, "a.yaml"), deployment("a", "staging"));
    const drift = await run(driftCommand, [dir, "--env", "prod", "--output", "json"]);
    expect(drift.out + drift.err).not.toContain("manifest-emptied");
    expect(drift.code).toBe(0); // pending (git moved), not drift
    expect(removedIn(drift.out)).toEqual(["a"]);
    const plan = await run(planCommand, [dir, "--env", "prod"]);
    expect(plan.out).toContain("a removed from git");
    const applied = await run(applyCommand, [dir, "--env", "prod", "--prune", "--yes"]);
    expect(applied.code).toBe(0);
    expect(applied.out).toContain("deleted");
    expect(await names(prod, PROD_KEY)).toEqual(["b"]);
    expect(await names(staging, STAGING_KEY)).toEqual(["a", "b"]);
  });

  it("one file narrowed out of an environment is a removal there; a sibling is never judged", async () => {
    const dir = join(repo, "one");
    await mkdir(dir);
    await writeFile(join(dir, "only.yaml"), deployment("only", "prod"));
    await writeFile(join(dir, "sibling.yaml"), deployment("sibling"));
    expect((await run(applyCommand, [dir, "--env", "prod", "--yes"])).code).toBe(0);
    expect(await names(prod, PROD_KEY, ["only", "sibling"])).toEqual(["only", "sibling"]);

    // only.yaml now runs nothing in prod: a drift of it alone judges only what it recorded.
    await writeFile(join(dir, "only.yaml"), deployment("only", "staging"));
    const drift = await run(driftCommand, [join(dir, "only.yaml"), "--env", "prod", "--output", "json"]);
    expect(removedIn(drift.out)).toEqual(["only"]);
    const applied = await run(applyCommand, [join(dir, "only.yaml"), "--env", "prod", "--prune", "--yes"]);
    expect(applied.code).toBe(0);
    expect(await names(prod, PROD_KEY, ["only", "sibling"])).toEqual(["sibling"]);
    // Nothing of only.yaml's is left in prod: its drift judges no one else's deployment.
    const after = await run(driftCommand, [join(dir, "only.yaml"), "--env", "prod", "--output", "json"]);
    expect(removedIn(after.out)).toEqual([]);
    expect(after.code).toBe(0);
    // Nor does a file that defines nothing at all, beside a store that records the sibling.
    await writeFile(join(dir, "notes.yaml"), "# nothing here yet\n");
    const notes = await run(driftCommand, [join(dir, "notes.yaml"), "--env", "prod", "--output", "json"]);
    expect(removedIn(notes.out)).toEqual([]);
  });
});
