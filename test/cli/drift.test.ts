import { execFile } from "node:child_process";
import { mkdir, readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatus } from "../../src/git/status/status-source.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { call, containerDoc, gitrepoDoc, writeManifests } from "../reconcile/harness.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });

/** A bare origin and a work clone whose `subdir` holds `docs`, committed and pushed to main. */
async function pushedRepo(root: string, subdir: string, docs: Parameters<typeof writeManifests>[1]) {
  const bare = join(root, "origin.git");
  await run("git", ["init", "--quiet", "--bare", "--initial-branch=main", bare]);
  const work = join(root, "work");
  await run("git", ["clone", "--quiet", bare, work]);
  await git(work, "checkout", "--quiet", "-b", "main");
  const manifests = join(work, subdir);
  await mkdir(manifests, { recursive: true });
  await writeManifests(manifests, docs);
  await git(work, "add", ".");
  await git(work, "commit", "--quiet", "-m", "m");
  await git(work, "push", "--quiet", "origin", "main");
  return { bare, work, manifests };
}

const driftFlags = (output: "text" | "json" | "markdown" = "text", over: Record<string, unknown> = {}) => ({
  output,
  target: [] as string[],
  ...over,
});

describe("plumb drift", () => {
  it("exit 0 in sync; exit 2 after an out-of-band PATCH, a deletion, or a manifest removed from git", async () => {
    const started = await startPlane();
    cp = started.cp;
    const docs = [
      gitrepoDoc("d-one"),
      containerDoc("d-two", "registry.example/two:1"),
      containerDoc("d-three", "registry.example/three:1"),
    ];
    await writeManifests(started.root, docs);
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);

    let io = captureIo(cp);
    expect(await runDrift(started.root, driftFlags(), io)).toBe(0);
    expect(io.out()).toContain("No drift: 3 objects match git.");

    const status = await loadStatusStore(join(started.root, ".plumb/status"));
    const one = status.objects.get("Deployment/d-one")!.id!;
    const two = status.objects.get("Deployment/d-two")!.id!;
    // Behind git's back: a PATCH, a deletion.
    expect(
      (await call(cp, "PATCH", `/v2/deployments/${one}`, { source_config: { build_on_push: true } })).status,
    ).toBe(200);
    expect((await call(cp, "DELETE", `/v2/deployments/${two}`)).status).toBe(204);
    // And d-three removed from git while still live.
    await writeManifests(started.root, docs.slice(0, 2));

    io = captureIo(cp);
    expect(await runDrift(started.root, driftFlags("json"), io)).toBe(2);
    const report = JSON.parse(io.out());
    const byName = Object.fromEntries(report.items.map((i: { name: string }) => [i.name, i]));
    expect(byName["d-one"]).toMatchObject({ reason: "differs", fields: ["source_config.build_on_push"] });
    expect(byName["d-two"]).toMatchObject({ reason: "vanished", id: two });
    expect(byName["d-three"]).toMatchObject({ reason: "removed-from-git" });
    expect(report.in_sync).toBe(false);

    // drift updates status.
    const after = await loadStatusStore(join(started.root, ".plumb/status"));
    expect(after.objects.get("Deployment/d-one")!.sync).toBe("OutOfSync");
    expect(after.objects.get("Deployment/d-two")!.health).toBe("Unknown");

    io = captureIo(cp);
    expect(await runDrift(started.root, driftFlags("markdown"), io)).toBe(2);
    expect(io.out()).toContain("| Deployment `d-one` | live differs from git (drift) |");
    io = captureIo(cp);
    expect(await runDrift(started.root, driftFlags("text"), io)).toBe(2);
    expect(io.out()).toContain("d-two: applied before, now gone from the control plane");
  });

  it("exit 1 when a secret's variable is unset: the object is not checked, never called drift in a field that cannot change", async () => {
    const started = await startPlane();
    cp = started.cp;
    const secret = { secrets: [{ name: "TOKEN", valueFrom: { env: "DRIFT_TOKEN" } }] };
    await writeManifests(started.root, [
      containerDoc("d-secret", "registry.example/s:1", secret),
      containerDoc("d-plain", "registry.example/p:1"),
    ]);
    const withToken = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: "plumb-local-key", DRIFT_TOKEN: "t0ken" };
    expect(await runApply(started.root, applyFlags(), captureIo(cp, { env: withToken }))).toBe(0);
    const { DRIFT_TOKEN: _unset, ...without } = withToken;

    let io = captureIo(cp, { env: without });
    expect(await runDrift(started.root, driftFlags("json"), io)).toBe(1);
    const report = JSON.parse(io.out()) as { items: unknown[]; not_checked: Array<{ name: string }> };
    expect(report.items).toEqual([]);
    expect(report.not_checked.map((n) => n.name)).toEqual(["d-secret"]);
    io = captureIo(cp, { env: without });
    expect(await runDrift(started.root, driftFlags("text"), io)).toBe(1);
    expect(io.out()).toContain("d-secret: not checked, an error stopped its plan");
    // Never "No drift" for the whole run: d-secret's drift is not known.
    expect(io.out()).toContain(
      "Drift unknown: 1 object not checked (errors above); of those checked, no drift: 1 object matches git.",
    );
    expect(io.out()).not.toContain("No drift");
    expect(io.out()).not.toContain("cannot change");
    // With the variable set again, in sync.
    expect(await runDrift(started.root, driftFlags(), captureIo(cp, { env: withToken }))).toBe(0);
  });

  it("exit 1 on invalid manifests, before any API call", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [
      { apiVersion: "plumb/v1", kind: "Deployment", metadata: { name: "x" }, spec: {} },
    ]);
    const io = captureIo(cp, { env: { PLUMB_API_URL: "http://127.0.0.1:1", PLUMB_API_KEY: "k" } });
    expect(await runDrift(started.root, driftFlags(), io)).toBe(1);
  });

  it("apply --status-branch commits status; a fresh clone's drift reads the fingerprints from it", async () => {
    const started = await startPlane();
    cp = started.cp;
    const { bare, work, manifests } = await pushedRepo(started.root, "deploy", [
      gitrepoDoc("branchy", { secrets: [{ name: "S", value: "v1" }] }),
    ]);

    const io = captureIo(cp);
    expect(await runApply(manifests, applyFlags({ statusBranch: "plumb-status" }), io)).toBe(0);
    expect(io.out()).toContain("Status committed to branch plumb-status");
    const head = (await git(work, "rev-parse", "HEAD")).stdout.trim();
    expect((await loadStatus({ root: manifests })).objects.get("Deployment/branchy")!.git_commit).toBe(head);

    const fresh = join(started.root, "fresh");
    await run("git", ["clone", "--quiet", bare, fresh]);
    // Without the branch a fresh clone cannot know the secret values: drift says they will be sent.
    const blind = captureIo(cp);
    expect(await runDrift(join(fresh, "deploy"), driftFlags(), blind)).toBe(2);
    const seeing = captureIo(cp);
    expect(
      await runDrift(join(fresh, "deploy"), driftFlags("text", { statusBranch: "plumb-status" }), seeing),
    ).toBe(0);
  });

  it("a second drift run with nothing new writes no status file and commits nothing to the status branch", async () => {
    const started = await startPlane();
    cp = started.cp;
    const { bare, work } = await pushedRepo(started.root, ".", [
      gitrepoDoc("quiet-one"),
      containerDoc("quiet-two", "registry.example/q:1"),
    ]);
    const flags = { statusBranch: "plumb-status" };
    expect(await runApply(work, applyFlags(flags), captureIo(cp))).toBe(0);

    const dir = join(work, ".plumb/status");
    const snapshot = async () => {
      const names = (await readdir(dir)).sort();
      const files = await Promise.all(
        names.map(async (n) => [n, await readFile(join(dir, n), "utf8"), (await stat(join(dir, n))).mtimeMs]),
      );
      const branch = (await git(bare, "rev-parse", "plumb-status")).stdout.trim();
      return { files, branch };
    };
    expect(await runDrift(work, driftFlags("text", flags), captureIo(cp))).toBe(0);
    const before = await snapshot();
    expect(await runDrift(work, driftFlags("text", flags), captureIo(cp))).toBe(0);
    expect(await snapshot()).toEqual(before);
  });
});
