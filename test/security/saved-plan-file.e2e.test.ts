import { chmod, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { readSavedPlan } from "../../src/reconcile/plan/saved-plan.js";
import { container, writeDoc } from "../controller/support.js";
import { captureIo, startPlane } from "../cli/reconcile-helpers.js";

// A saved plan (plan --out) is owner-only, even over an existing file; a file that is not the shape
// plumb wrote (hand-edited: an object as a salt, a number as a name) is plan-invalid, exit 1,
// instead of failing inside apply (it was exit 70, an internal error).

let cp: RunningControlPlane;
let root: string;
let planFile: string;

beforeEach(async () => {
  ({ cp, root } = await startPlane());
  planFile = join(root, "..", `${root.split("/").at(-1)}.plan.json`);
  await writeDoc(
    root,
    "a.yaml",
    container("alpha", "img/alpha:1", { secrets: [{ name: "T", value: "v4lue-1234" }] }),
  );
});
afterEach(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
  await rm(planFile, { force: true });
});

async function savePlan() {
  const io = captureIo(cp);
  io.env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  await planCommand(io).parseAsync(["node", "plan", root, "--out", planFile]);
  process.exitCode = 0;
}

/** A saved plan as JSON, to edit by hand (any shape goes: that is the point). */
type Edited = {
  changes: Array<Record<string, unknown>>;
  saved: { objects: Array<Record<string, unknown> & { secrets: Record<string, unknown> }> | object };
};
const objects = (p: Edited) =>
  p.saved.objects as Array<Record<string, unknown> & { secrets: Record<string, unknown> }>;

const refusal = (file: string) =>
  readSavedPlan(file).then(
    () => undefined,
    (error: unknown) => error as { code: string; exitCode: number; message: string },
  );

describe("saved plan files", () => {
  it("are written 0600, also over an existing world-readable file", async () => {
    await writeFile(planFile, "old");
    await chmod(planFile, 0o644);
    await savePlan();
    expect((await stat(planFile)).mode & 0o777).toBe(0o600);
    expect((await readSavedPlan(planFile)).saved.objects).toHaveLength(1);
  });

  it.each([
    [
      "an object as a salt",
      (p: Edited) => (objects(p)[0]!.secrets.salt = { x: 1 }),
      "/saved/objects/0/secrets",
    ],
    ["a number as a name", (p: Edited) => (objects(p)[0]!.name = 7), "/saved/objects/0/name"],
    ["objects that are not a list", (p: Edited) => (p.saved.objects = { a: 1 }), "/saved/objects"],
    ["a change without a kind", (p: Edited) => delete p.changes[0]!.kind, "/changes/0/kind"],
    ["a live version of the wrong type", (p: Edited) => (objects(p)[0]!.live = "x"), "/saved/objects/0/live"],
  ])("refuses %s as plan-invalid, exit 1, naming where", async (_what, edit, where) => {
    await savePlan();
    const plan = JSON.parse(await readFile(planFile, "utf8")) as Edited;
    edit(plan);
    await writeFile(planFile, JSON.stringify(plan));
    const error = await refusal(planFile);
    expect(error).toMatchObject({ code: "plan-invalid", exitCode: 1 });
    expect(error?.message).toContain(where);
    expect(error?.message).toContain("plumb plan --out again");
  });
});
