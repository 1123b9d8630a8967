import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { environmentDoc, plain, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// A saved plan of a directory whose manifests name no environment, made with --env below the
// Environment documents (docs/environments.md "Saved plans", "A directory as PATH"): apply --plan
// FILE applies the environments the file holds, --env or not, as the plan's own hint says. Without
// --env it was refused ("holds the plans of environments (staging), and PATH defines none"): the
// quick scan did not look above a PATH whose manifests name none, though the plan named staging.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let repo: string;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  repo = await mkdtemp(join(tmpdir(), "plumb-env-probe-saved-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await mkdir(join(repo, "agents"));
  await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(join(repo, "environments", "prod.yaml"), environmentDoc("prod"));
  await writeFile(join(repo, "agents", "q.yaml"), plain("q"));
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(repo, { recursive: true, force: true });
});

const names = async (plane: RunningControlPlane, key: string) =>
  (await api(plane.url, key).deployments()).map((d) => d.name);

describe("apply --plan FILE of a directory below the Environment documents", () => {
  it("applies the environments the file holds without --env, there only", async () => {
    const file = join(repo, "plan.json");
    const agents = join(repo, "agents");
    const planned = await runCommand(planCommand, [agents, "--env", "staging", "--out", file], {
      staging,
      prod,
    });
    expect(planned.code).toBe(0);
    const applied = await runCommand(applyCommand, [agents, "--plan", file, "--yes"], { staging, prod });
    expect(applied.code).toBe(0);
    expect(await names(staging, STAGING_KEY)).toEqual(["q"]);
    expect(await names(prod, PROD_KEY)).toEqual([]);
  });
});
