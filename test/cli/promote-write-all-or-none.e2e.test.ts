import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCliWithFileLimit } from "../support/built-cli.js";
import { planesEnv, prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// promote --write of two files when the second cannot be written (a file-size limit, as a full
// disk): neither file changes. Written one after the other, the first was promoted and the error
// named only the second, a half promotion no report mentioned. The built CLI under `ulimit -f`,
// staging's versions read from its real control plane.

let planes: TwoPlanes;
let dir: string;
// alpha.yaml is small; beta.yaml, past the limit with its comment, cannot be written whole.
const ALPHA = `${plain("alpha")}${prodImage("img/alpha:0")}`;
const BETA = `# ${"notes ".repeat(3000)}\n${plain("beta")}${prodImage("img/beta:0")}`;

beforeAll(async () => {
  assertBuilt();
  planes = await startTwoPlanes();
  const files = { "alpha.yaml": ALPHA, "beta.yaml": BETA };
  dir = await promotionRepo(planes, files, { prefix: "plumb-promote-all-or-none-" });
});

afterAll(() => stopPromotion(planes, dir));

describe("promote --write when one file cannot be written", () => {
  it("changes no file, and says nothing was written", async () => {
    const env = planesEnv(planes);
    const failed = await runCliWithFileLimit(8, ["promote", dir, "--to", "prod", "--write"], env).then(
      () => null,
      (error: Error & { code?: number }) => error,
    );
    expect(failed?.message).toContain("[manifest-write-failed]");
    expect(failed?.message).toContain("nothing was written");
    expect(await readFile(join(dir, "alpha.yaml"), "utf8")).toBe(ALPHA);
    expect(await readFile(join(dir, "beta.yaml"), "utf8")).toBe(BETA);

    await runCliWithFileLimit(1024, ["promote", dir, "--to", "prod", "--write"], env);
    expect(await readFile(join(dir, "alpha.yaml"), "utf8")).toContain('image_uri: "img/alpha:1"');
    expect(await readFile(join(dir, "beta.yaml"), "utf8")).toContain('image_uri: "img/beta:1"');
  });
});
