import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// A version whose build failed in the source environment is never promoted, whatever the gates.
// With `gates: {deployed: false}` (no soak, no checks) nothing looked at the latest revision's
// status, so promote copied the image staging's control plane had just reported BUILD_FAILED
// into prod's override ("would be promoted", and --write wrote it). Staging's real control plane
// fails the build (an image naming `fail-build`).

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";
const FAILING = "img/agent:2-fail-build";

beforeAll(async () => {
  planes = await startTwoPlanes();
  const files = { [FILE]: `${plain("agent")}${prodImage("img/agent:0")}` };
  dir = await promotionRepo(planes, files, { prefix: "plumb-promote-failed-", gates: "{deployed: false}" });
  // Staging's next version fails to build there.
  await writeFile(
    join(dir, FILE),
    `${plain("agent").replace("img/agent:1", FAILING)}${prodImage("img/agent:0")}`,
  );
  const applied = await runCommand(applyCommand, [dir, "--env", "staging", "--yes"], planes);
  expect(applied.out).toContain("BUILD_FAILED");
  expect(applied.code).toBe(1);
});

afterAll(() => stopPromotion(planes, dir));

describe("promote of a version that failed in the source", () => {
  it("is blocked with the revision's status, even with deployed: false, and writes nothing", async () => {
    const before = await readFile(join(dir, FILE), "utf8");
    let out = "";
    const keep: typeof promoteCommand = (io) =>
      promoteCommand({ ...io!, stdout: { write: (t: string) => (out += t) } });
    const error = await runCommand(keep, [dir, "--to", "prod", "--write"], planes).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).toBe("promotion-blocked");
    expect(out).toContain("agent: blocked");
    expect(out).toMatch(
      /! revision \S+ is BUILD_FAILED in staging \("Forced failure: fail-build"\): a version that failed there is never promoted/,
    );
    expect(await readFile(join(dir, FILE), "utf8")).toBe(before);
  });
});
