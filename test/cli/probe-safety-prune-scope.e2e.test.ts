import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { startController } from "../../src/controller/controller.js";
import { runInProcess } from "../support/in-process-cli.js";
import { fastControllerOptions } from "../controller/harness.js";
import { waitFor } from "../controller/support.js";
import { containerManifest } from "../support/manifest-text.js";

// A prune scoped narrower than its status store (one file, or a directory below the store's own,
// with --status-dir) judged the store's records by their manifest_file alone, relative to
// whichever directory wrote them: `apply A/x.yaml --prune --status-dir S` deleted what B/x.yaml
// had recorded in S, and `apply d/sub --prune --status-dir d/.plumb/status` deleted what d/ still
// defines. Counted on the control plane: the deployments listed, by id.

let plane: RunningControlPlane;
let repo: string;
const env = () => ({ PLUMB_API_URL: plane.url, PLUMB_API_KEY: DEFAULT_API_KEY });
const plumb = (...args: string[]) => runInProcess(args, env());

const doc = containerManifest;

async function live(): Promise<Map<string, string>> {
  const res = await fetch(`${plane.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  const { resources } = (await res.json()) as { resources: Array<{ name: string; id: string }> };
  return new Map(resources.map((d) => [d.name, d.id]));
}

async function write(path: string, text: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
}

beforeAll(async () => {
  plane = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
});
afterAll(async () => {
  await plane?.stop();
  if (repo) await rm(repo, { recursive: true, force: true });
});
beforeEach(async () => {
  if (repo) await rm(repo, { recursive: true, force: true });
  repo = await mkdtemp(join(tmpdir(), "plumb-prune-scope-"));
  execFileSync("git", ["init", "-q", repo]);
  for (const id of (await live()).values()) {
    await fetch(`${plane.url}/v2/deployments/${id}`, {
      method: "DELETE",
      headers: { "x-api-key": DEFAULT_API_KEY },
    });
  }
});

it("two manifest directories sharing --status-dir: a prune of one never deletes the other's", async () => {
  const store = join(repo, "shared-status");
  await write(join(repo, "A", "x.yaml"), `${doc("a1")}---\n${doc("a2")}`);
  await write(join(repo, "B", "x.yaml"), doc("b1"));
  for (const dir of ["A", "B"])
    expect((await plumb("apply", join(repo, dir), "--status-dir", store, "--yes", "--no-wait")).code).toBe(0);
  await write(join(repo, "A", "x.yaml"), doc("a1")); // a2 removed from git; b1 untouched
  const before = await live();
  const plan = await plumb("plan", join(repo, "A", "x.yaml"), "--prune", "--status-dir", store);
  expect(plan.output).not.toMatch(/Deployment b1\b/);
  expect(
    (await plumb("apply", join(repo, "A", "x.yaml"), "--prune", "--status-dir", store, "--yes")).code,
  ).toBe(0);
  expect([...(await live()).keys()].sort()).toEqual(["a1", "b1"]);
  // the directory too
  expect((await plumb("apply", join(repo, "A"), "--prune", "--status-dir", store, "--yes")).code).toBe(0);
  const after = await live();
  expect(after.get("b1")).toBe(before.get("b1"));
  expect(after.get("a1")).toBe(before.get("a1"));
});

it("a controller's records in a shared --status-dir name their directory too: apply --prune of another keeps them", async () => {
  const store = join(repo, "shared-status");
  await write(join(repo, "A", "x.yaml"), `${doc("a1")}---\n${doc("a2")}`);
  await write(join(repo, "B", "x.yaml"), doc("b1"));
  expect((await plumb("apply", join(repo, "A"), "--status-dir", store, "--yes", "--no-wait")).code).toBe(0);
  const controller = await startController(
    fastControllerOptions(plane, { source: { kind: "dir", dir: join(repo, "B") }, statusDir: store }),
  );
  try {
    const record = join(store, "deployment.b1.json");
    // (the intent written ahead of the PATCH comes first; the applied record names its file)
    const applied = async () => {
      const text = await readFile(record, "utf8").catch(() => "{}");
      return (JSON.parse(text) as { manifest_file?: string }).manifest_file ? text : undefined;
    };
    const written = await waitFor("b1's applied record", applied);
    expect(JSON.parse(written)).toMatchObject({ manifest_file: "x.yaml", manifest_root: "B" });
  } finally {
    await controller.stop(1_000);
  }
  await write(join(repo, "A", "x.yaml"), doc("a1")); // a2 removed from git; B's b1 untouched
  const before = await live();
  expect((await plumb("apply", join(repo, "A"), "--prune", "--status-dir", store, "--yes")).code).toBe(0);
  const after = await live();
  expect([...after.keys()].sort()).toEqual(["a1", "b1"]);
  expect(after.get("b1")).toBe(before.get("b1"));
});

it("records written before their directory was recorded: a one-file prune of a shared store keeps them", async () => {
  const store = join(repo, "shared-status");
  await write(join(repo, "A", "x.yaml"), doc("a1"));
  await write(join(repo, "B", "x.yaml"), doc("b1"));
  for (const dir of ["A", "B"])
    expect((await plumb("apply", join(repo, dir), "--status-dir", store, "--yes", "--no-wait")).code).toBe(0);
  for (const name of await readdir(store)) {
    if (!name.startsWith("deployment.")) continue;
    const record = JSON.parse(await readFile(join(store, name), "utf8")) as Record<string, unknown>;
    delete record.manifest_root; // as an older plumb wrote it
    await writeFile(join(store, name), JSON.stringify(record));
  }
  const before = await live();
  const plan = await plumb("plan", join(repo, "A", "x.yaml"), "--prune", "--status-dir", store);
  expect(plan.output).toMatch(/b1 removed from git \(kept: /);
  expect(
    (await plumb("apply", join(repo, "A", "x.yaml"), "--prune", "--status-dir", store, "--yes")).code,
  ).toBe(0);
  expect(await live()).toEqual(before);
});

it("a directory below the store's: what the store's tree still defines (moved up, or beside) is kept", async () => {
  const d = join(repo, "d");
  await write(join(d, "y.yaml"), doc("y1"));
  await write(join(d, "sub", "x.yaml"), `${doc("x1")}---\n${doc("x2")}---\n${doc("x3")}---\n${doc("x4")}`);
  expect((await plumb("apply", d, "--yes", "--no-wait")).code).toBe(0);
  // x2 moves up to d/, x3 to a sibling directory; x4 leaves git altogether
  await write(join(d, "sub", "x.yaml"), doc("x1"));
  await write(join(d, "y.yaml"), `${doc("y1")}---\n${doc("x2")}`);
  await write(join(d, "other", "z.yaml"), doc("x3"));
  const before = await live();
  const store = join(d, ".plumb", "status");
  const plan = await plumb("plan", join(d, "sub"), "--prune", "--status-dir", store);
  expect(plan.output).not.toMatch(/Deployment (x2|x3|y1)/);
  const apply = await plumb("apply", join(d, "sub"), "--prune", "--status-dir", store, "--yes");
  expect(apply.code).toBe(0);
  const after = await live();
  expect([...after.keys()].sort()).toEqual(["x1", "x2", "x3", "y1"]);
  for (const name of after.keys()) expect(after.get(name)).toBe(before.get(name));
});

it("a tree moved with its store (its recorded directory gone) still prunes what left it", async () => {
  await write(join(repo, "deploy", "x.yaml"), `${doc("x1")}---\n${doc("x2")}`);
  expect((await plumb("apply", join(repo, "deploy"), "--yes", "--no-wait")).code).toBe(0);
  await rename(join(repo, "deploy"), join(repo, "deployments"));
  await write(join(repo, "deployments", "x.yaml"), doc("x1"));
  const before = await live();
  expect((await plumb("apply", join(repo, "deployments"), "--prune", "--yes")).code).toBe(0);
  const after = await live();
  expect([...after.keys()]).toEqual(["x1"]);
  expect(after.get("x1")).toBe(before.get("x1"));
});

it("a deployment moved to a sibling directory with its own store, applied there since, is kept", async () => {
  const p = join(repo, "p");
  await write(join(p, "d", "x.yaml"), `${doc("x")}---\n${doc("k")}`);
  expect((await plumb("apply", join(p, "d"), "--yes", "--no-wait")).code).toBe(0);
  await write(join(p, "d", "x.yaml"), doc("k"));
  await write(join(p, "e", "y.yaml"), doc("x")); // x moves to p/e, whose apply records it (same id)
  expect((await plumb("apply", join(p, "e"), "--yes", "--no-wait")).code).toBe(0);
  const before = await live();
  const plan = await plumb("plan", join(p, "d"), "--prune");
  expect(plan.output).not.toMatch(/Deployment x\b/);
  expect((await plumb("apply", join(p, "d"), "--prune", "--yes")).code).toBe(0);
  expect(await live()).toEqual(before);
  // once p/e no longer defines it either, the prune of p/d deletes it
  await write(join(p, "e", "y.yaml"), doc("k2"));
  expect((await plumb("apply", join(p, "d"), "--prune", "--yes")).code).toBe(0);
  expect((await live()).has("x")).toBe(false);
});
