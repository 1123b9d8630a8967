import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import {
  environmentDoc,
  plain,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
  type TwoPlanes,
} from "./two-planes.js";

// plumb promote when the source environment's control plane answers a revision whose version is
// not one a person could have pinned: control characters (a terminal escape, a line break that
// starts a CI workflow command), a value thousands of characters long, an image "tag" that is a
// broken digest. Staging's deployment is applied by plumb, then its revision is replaced through
// the API, as a hostile or broken control plane would report it. Nothing is written.

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";
const MANIFEST = `${plain("agent")}environments:
  prod:
    spec:
      source_revision_config: {image_uri: "img/agent:1"}
`;

/** promote in this process; its output kept when it ends with an error (a refusal throws). */
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
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-hostile-"));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: false}}\n"),
  );
  await writeFile(join(dir, FILE), MANIFEST);
  const applied = await runCommand(applyCommand, [dir, "--env", "staging", "--yes"], planes);
  expect(applied.code, applied.err).toBe(0);
});

afterAll(async () => {
  await planes.staging.stop();
  await planes.prod.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("promote from a control plane that reports a version no one pinned", () => {
  for (const [what, image] of [
    ["a terminal escape", "img/agent:2\u001b]8;;https://evil.example\u0007"],
    ["a line break starting a workflow command", "img/agent:2\n::add-mask::ghp_x"],
    ["a space and a comment", "img/agent:2 # prod"],
    ["a broken digest read as a tag", "img/agent@sha256:abc"],
    ["a tag of 5000 characters", `img/agent:${"a".repeat(5000)}`],
  ] as const)
    it(`${what}: refused as unpinned, the file left alone`, async () => {
      await stagingRuns(image);
      for (const mode of [["--write"], ["--dry-run"]]) {
        const run = await promote(...mode);
        expect(run.error?.code).toBe("promotion-unpinned");
        expect(run.out).toContain("unpinned");
        expect(await readFile(join(dir, FILE), "utf8")).toBe(MANIFEST);
      }
    });

  it("a tag as the control plane reports it is still promoted", async () => {
    await stagingRuns("registry.example:5000/img/agent:2.0.1");
    const run = await promote("--write");
    expect(run.error).toBeUndefined();
    expect(await readFile(join(dir, FILE), "utf8")).toContain(
      'source_revision_config: {image_uri: "registry.example:5000/img/agent:2.0.1"}',
    );
  });
});
