import { spawnSync } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCommand } from "../../src/cli/sync/plan.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// promote --write stages each file as FILE.<pid>.<hex>.tmp and renames it over; a promote killed
// between the two left the temp file for ever. It is never read as a manifest (its name does not
// end in .yaml), and the next rewrite into its directory removes those of processes that are gone,
// keeping one whose process runs (a write in flight). docs/environments.md "Promotion".

let planes: TwoPlanes;
let dir: string;

beforeAll(async () => {
  planes = await startTwoPlanes();
  const files = { "alpha.yaml": `${plain("alpha")}${prodImage("img/alpha:0")}` };
  dir = await promotionRepo(planes, files, { prefix: "plumb-promote-stale-temp-" });
});

afterAll(() => stopPromotion(planes, dir));

describe("temp files a killed promote --write left", () => {
  it("are not read as manifests, and the next promote removes those of gone processes", async () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid; // exited: its id runs nothing now
    const stale = `alpha.yaml.${gone}.0123456789ab.tmp`;
    const inFlight = `alpha.yaml.${process.pid}.ba9876543210.tmp`;
    // What a killed run staged: a whole manifest, of a name no file defines.
    for (const name of [stale, inFlight]) await writeFile(join(dir, name), plain("ghost"));

    const plan = await runCommand(planCommand, [dir, "--env", "prod", "--output", "json"], planes);
    expect(plan.code, plan.err).toBe(0);
    expect(plan.out).toContain('"alpha"');
    expect(plan.out).not.toContain("ghost");

    const run = await runCommand(promoteCommand, [dir, "--to", "prod", "--write"], planes);
    expect(run.code, run.err).toBe(0);
    expect(await readFile(join(dir, "alpha.yaml"), "utf8")).toContain('image_uri: "img/alpha:1"');
    const left = (await readdir(dir)).filter((n) => n.endsWith(".tmp"));
    expect(left).toEqual([inFlight]);
  });
});
