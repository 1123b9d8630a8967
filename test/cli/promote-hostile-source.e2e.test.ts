import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { appliedDigest } from "../../src/status/checks/checks-record-applied.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { gitIn, prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// plumb promote when the source environment's control plane answers a revision whose version is
// not one a person could have pinned: control characters (a terminal escape, a line break that
// starts a CI workflow command), a value thousands of characters long, an image "tag" that is a
// broken digest. Staging's deployment is applied by plumb, then its revision is replaced through
// the API, as a hostile or broken control plane would report it. Nothing is written, and the
// report prints the value escaped on one line. A checks record (as the status branch may carry it)
// whose fields hold line breaks gives a --branch commit message with no line of its own making.

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";
const MANIFEST = `${plain("agent")}${prodImage("img/agent:1")}`;

/** promote of `root` in this process; its output kept when it ends with an error (a refusal throws). */
async function promoteIn(root: string, ...args: string[]) {
  let out = "";
  let error: (Error & { code?: string }) | undefined;
  const keep: typeof promoteCommand = (io) =>
    promoteCommand({ ...io!, stdout: { write: (t: string) => (out += t) } });
  await runCommand(keep, [root, "--to", "prod", ...args], planes).catch((e: Error) => (error = e));
  return { out, error };
}
const promote = (...args: string[]) => promoteIn(dir, ...args);

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
  dir = await promotionRepo(planes, { [FILE]: MANIFEST }, { prefix: "plumb-promote-hostile-" });
});

afterAll(() => stopPromotion(planes, dir));

// eslint-disable-next-line no-control-regex -- what must not reach the terminal or a CI log
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|\n::/;

describe("promote from a control plane that reports a version no one pinned", () => {
  for (const [what, image] of [
    ["a terminal escape", "img/agent:2\u001b]8;;https://evil.example\u0007"],
    ["a line break starting a workflow command", "img/agent:2\n::add-mask::ghp_x"],
    ["a space and a comment", "img/agent:2 # prod"],
    ["a broken digest read as a tag", "img/agent@sha256:abc"],
    ["a tag of 5000 characters", `img/agent:${"a".repeat(5000)}`],
  ] as const)
    it(`${what}: refused as unpinned, the file left alone, the value printed escaped`, async () => {
      await stagingRuns(image);
      for (const mode of [["--write"], ["--dry-run"]]) {
        const run = await promote(...mode);
        expect(run.error?.code).toBe("promotion-unpinned");
        expect(run.out).not.toMatch(CONTROL);
        expect(run.error?.message).not.toMatch(CONTROL);
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

describe("a checks record whose fields hold line breaks", () => {
  const FORGED = "2026-11-26T00:00:00Z\n::add-mask::x\n\nSigned-off-by: Mallory <m@evil.example>\u001b[2K";

  it("is promoted from with --branch, its evidence on one line in the report and the commit message", async () => {
    const files = {
      "evidence.yaml": `${plain("evidence").replace(":1", ":2")}${prodImage("img/evidence:1")}`,
    };
    const gates = "{deployed: false, checks: {min_pass_ratio: 0.5}}";
    const repo = await promotionRepo(planes, files, { prefix: "plumb-promote-evidence-", gates, git: true });
    const git = gitIn(repo);
    try {
      const file = join(repo, ".plumb", "status", "staging", "deployment.evidence.json");
      const record = JSON.parse(await readFile(file, "utf8")) as ObjectStatus;
      const headers = { "x-api-key": STAGING_KEY };
      const list = await fetch(`${planes.staging.url}/v2/deployments`, { headers });
      const live = (
        (await list.json()) as { resources: Array<{ name: string; latest_revision_id: string }> }
      ).resources.find((d) => d.name === "evidence")!;
      const checks = {
        revision_id: live.latest_revision_id,
        at: FORGED,
        runs: 2,
        passed: 2,
        pass_ratio: 1,
        latency_ms: { p50: 1, p95: 1, max: 1 },
        applied_digest: appliedDigest(record),
      };
      await writeFile(file, JSON.stringify({ ...record, checks }, null, 2));
      const run = await promoteIn(repo, "--branch", "promote/evidence");
      expect(run.error).toBeUndefined();
      expect(run.out).toContain("\\n::add-mask::x");
      expect(run.out).not.toMatch(CONTROL);
      const message = git("log", "-1", "--format=%B", "promote/evidence");
      expect(message).toContain("img/evidence:2");
      expect(message).not.toMatch(CONTROL);
      expect(message).not.toMatch(/^Signed-off-by/m);
      expect(git("log", "-1", "--format=%(trailers)", "promote/evidence").trim()).toBe("");
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});

describe("a manifest line that reads as a CI workflow command", () => {
  it("is printed in promote's diff with its first colon escaped, so no line of the output starts one", async () => {
    // A block scalar's lines next to the promoted line: the diff's context shows them.
    const manifest = `${plain("lines").replace(":1", ":2")}environments:
  prod:
    spec:
      verify:
        assistant_id: agent
        cases:
          - name: lines
            input: |
              ::add-mask::context-line
                ::warning::injected
      source_revision_config: {image_uri: "img/lines:1"}
`;
    const repo = await promotionRepo(
      planes,
      { "lines.yaml": manifest },
      { prefix: "plumb-promote-diff-lines-" },
    );
    try {
      const run = await promoteIn(repo, "--dry-run");
      expect(run.error).toBeUndefined();
      expect(run.out).toContain('+      source_revision_config: {image_uri: "img/lines:2"}');
      expect(run.out).toMatch(/^ {15}\\u003a:add-mask::context-line$/m);
      expect(run.out).toMatch(/^ {17}\\u003a:warning::injected$/m);
      expect(run.out).not.toMatch(/^\s*::/m);
      expect(await readFile(join(repo, "lines.yaml"), "utf8")).toBe(manifest);
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
