import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { runInProcess } from "../support/in-process-cli.js";
import { internalSource, writeDoc } from "../controller/support.js";

// An internal_source apply SIGKILLed once its PATCH setting the uploaded tarball had landed: the
// write-ahead intent held the fingerprints, digest and commit, not the source, so the re-run settled
// the intent as landed but still found the source "changed" (the record's source_upload was the
// old one), uploaded it again and PATCHed again: two revisions for one change, counted on the
// control plane. The intent now holds the source's digest; landed, it becomes the record's
// source_upload with the tarball path live holds, and the re-run sends nothing.

let plane: RunningControlPlane;
let proxy: HoldingProxy;
let dir: string;
const env = () => ({ PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY });

async function writeSource(name: string, version: string) {
  await mkdir(join(dir, name, "src"), { recursive: true });
  await writeFile(join(dir, name, "package.json"), '{"name": "agent", "type": "module"}\n');
  await writeFile(join(dir, name, "langgraph.json"), '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
  await writeFile(join(dir, name, "src/agent.ts"), `export const version = "${version}";\n`);
}
async function call<T>(path: string): Promise<T> {
  const res = await fetch(`${plane.url}${path}`, { headers: { "x-api-key": DEFAULT_API_KEY } });
  return (await res.json()) as T;
}
async function revisionsOf(name: string): Promise<number> {
  const { resources } = await call<{ resources: Array<{ id: string; name: string }> }>(
    "/v2/deployments?limit=100",
  );
  const id = resources.find((d) => d.name === name)?.id;
  if (!id) return 0;
  return (await call<{ resources: unknown[] }>(`/v2/deployments/${id}/revisions?limit=100`)).resources.length;
}

/** `plumb apply` (built) killed once its upload PATCH landed, then run again in process. */
async function killedAtUploadPatch(): Promise<{ code: number; output: string; writes: string[] }> {
  const held = proxy.hold((method) => method === "PATCH");
  const run = spawnCli(["apply", dir, "--yes"], env());
  const request = await Promise.race([held, run.exited.then(() => null)]);
  if (!request) throw new Error(`apply ended before its PATCH:\n${run.output()}`);
  await request.land(); // the server set the tarball (a new revision); the apply never hears of it
  run.child.kill("SIGKILL");
  await run.exited;
  const mark = proxy.requests.length;
  const rerun = await runInProcess(["apply", dir, "--yes"], env());
  const writes = proxy.requests.slice(mark).filter((r) => r.method !== "GET");
  return { ...rerun, writes: writes.map((r) => `${r.method} ${r.url}`) };
}

beforeAll(async () => {
  assertBuilt();
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  proxy = await startHoldingProxy(plane.url);
  dir = await mkdtemp(join(tmpdir(), "plumb-crash-upload-"));
  execFileSync("git", ["init", "-q", dir]);
});
afterAll(async () => {
  await proxy?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("killed once the PATCH of a changed source landed: the re-run uploads and sends nothing, one revision", async () => {
  await writeSource("docs", "1");
  await writeDoc(dir, "docs.yaml", internalSource("docs", "./docs"));
  const created = await runInProcess(["apply", dir, "--yes"], env());
  expect(created.code, created.output).toBe(0);
  const before = await revisionsOf("docs");

  await writeSource("docs", "2");
  const rerun = await killedAtUploadPatch();
  expect(rerun.code, rerun.output).toBe(0);
  expect(rerun.writes).toEqual([]);
  expect(await revisionsOf("docs")).toBe(before + 1);
  const plan = await runInProcess(["plan", dir, "--detailed-exitcode"], env());
  expect(plan.code, plan.output).toBe(0);
}, 60_000);

it("killed once a create's upload PATCH landed: the re-run uploads and sends nothing", async () => {
  await writeSource("fresh", "1");
  await writeDoc(dir, "fresh.yaml", internalSource("fresh", "./fresh"));
  const rerun = await killedAtUploadPatch();
  expect(rerun.code, rerun.output).toBe(0);
  expect(rerun.writes).toEqual([]);
  expect(await revisionsOf("fresh")).toBe(2); // the create's, and the upload's
}, 60_000);
