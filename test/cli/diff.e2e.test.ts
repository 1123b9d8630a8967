import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { diffCommand } from "../../src/cli/sync/diff.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { containerDoc, writeManifests } from "../reconcile/harness.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// plumb diff FILE against the local control plane: the plan, then live against the file as a
// unified YAML diff in which only real changes show (same renderer on both sides), secrets by name.

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
  process.exitCode = 0;
});

async function diff(root: string, extra: string[] = []) {
  const io = captureIo(cp!);
  process.exitCode = 0;
  await diffCommand(io).parseAsync(["node", "diff", `${root}/deployments.yaml`, ...extra]);
  return { out: io.out(), err: io.err(), code: process.exitCode };
}

describe("plumb diff FILE", () => {
  it("shows a create as a diff from nothing, then only the changed line of an edit, and no diff when in sync", async () => {
    const started = await startPlane();
    cp = started.cp;
    const doc = (image: string) =>
      containerDoc("diff-a", image, { secrets: [{ name: "TOKEN", value: "diff-secret-value" }] });
    await writeManifests(started.root, [doc("registry.example/a:1")]);

    const created = await diff(started.root);
    expect(created.out).toContain("+ create Deployment diff-a");
    expect(created.out).toContain("--- /dev/null\n+++ deployments.yaml");
    expect(created.out).toContain("+    image_uri: registry.example/a:1");
    expect(created.out).toContain("+    - name: TOKEN");

    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    expect((await diff(started.root)).out).toContain("= Deployment diff-a (deployments.yaml:2): no changes");

    await writeManifests(started.root, [doc("registry.example/a:2")]);
    const edited = await diff(started.root, ["--detailed-exitcode"]);
    expect(edited.code).toBe(2);
    expect(edited.out).toContain("--- live/Deployment/diff-a\n+++ deployments.yaml");
    const changed = edited.out.split("\n").filter((l) => /^[+-] /.test(l) || /^[+-]\s{2,}\S/.test(l));
    expect(changed).toEqual(["-    image_uri: registry.example/a:1", "+    image_uri: registry.example/a:2"]);
    for (const run of [created, edited]) expect(run.out + run.err).not.toContain("diff-secret-value");
  });

  it("says a changed secret value without showing it", async () => {
    const started = await startPlane();
    cp = started.cp;
    const doc = (value: string) =>
      containerDoc("diff-s", "registry.example/s:1", { secrets: [{ name: "TOKEN", value }] });
    await writeManifests(started.root, [doc("first-value")]);
    expect(await runApply(started.root, applyFlags(), captureIo(cp))).toBe(0);
    await writeManifests(started.root, [doc("second-value")]);
    const out = (await diff(started.root)).out;
    expect(out).toContain("secret TOKEN: value changes (not shown)");
    expect(out).not.toMatch(/first-value|second-value/);
  });
});
