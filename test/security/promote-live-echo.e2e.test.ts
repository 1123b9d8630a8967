import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { gitIn, prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes, type TwoPlanes } from "../cli/two-planes.js";

// plumb promote copies the source environment's live version (its revision's image_uri, repo_ref,
// graph_config_path) into git and commits it (--branch). A source control plane that reports its
// own API key as the version (an image tag a registry would take) had it written into the target's
// override and committed, for everyone who reads the repository (docs/security.md, "Live values").
// Now such a value is shown redacted and refused: nothing written, no branch.

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";
const MANIFEST = `${plain("agent")}${prodImage("img/agent:1")}`;

async function promote(...args: string[]) {
  let out = "";
  let error: (Error & { code?: string }) | undefined;
  const keep: typeof promoteCommand = (io) =>
    promoteCommand({ ...io!, stdout: { write: (t: string) => (out += t) } });
  await runCommand(keep, [dir, "--to", "prod", ...args], planes).catch((e: Error) => (error = e));
  return { out, error };
}

/** Staging's deployment `agent` given a new revision built from `image` (as its control plane says). */
async function stagingRuns(image: string) {
  const headers = { "x-api-key": STAGING_KEY, "content-type": "application/json" };
  const list = await fetch(`${planes.staging.url}/v2/deployments`, { headers });
  const { resources } = (await list.json()) as { resources: Array<{ id: string; name: string }> };
  const id = resources.find((d) => d.name === "agent")!.id;
  const res = await fetch(`${planes.staging.url}/v2/deployments/${id}`, {
    method: "PATCH",
    headers,
    body: JSON.stringify({ source_revision_config: { image_uri: image } }),
  });
  expect(res.status).toBeLessThan(300);
}

beforeAll(async () => {
  planes = await startTwoPlanes();
  dir = await promotionRepo(planes, { [FILE]: MANIFEST }, { prefix: "plumb-promote-echo-", git: true });
}, 60_000);
afterAll(() => stopPromotion(planes, dir));

describe("promote from a control plane that reports its API key as the version", () => {
  it("writes nothing, commits nothing and prints the key nowhere", async () => {
    await stagingRuns(`img/agent:${STAGING_KEY}`);
    const runs = [
      await promote("--dry-run"),
      await promote("--write"),
      await promote("--branch", "promote/echo"),
    ];
    for (const run of runs) {
      const said = `${run.out}\n${run.error?.message ?? ""}`;
      expect(said).not.toContain(STAGING_KEY.slice(0, 12));
      expect(said).not.toContain(STAGING_KEY.slice(-12));
      expect(run.error?.code, said).toBe("promotion-unpinned");
      expect(said).toContain("[redacted]");
    }
    expect(await readFile(join(dir, FILE), "utf8")).toBe(MANIFEST);
    const git = gitIn(dir);
    expect(git("branch", "--list", "promote/echo").trim()).toBe("");
    expect(git("log", "-p", "--all")).not.toContain(STAGING_KEY.slice(-12));
  }, 60_000);
});
