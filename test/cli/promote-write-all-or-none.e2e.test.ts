import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { assertBuilt, runCliWithFileLimit } from "../support/built-cli.js";
import {
  environmentDoc,
  plain,
  PROD_KEY,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
  type TwoPlanes,
} from "./two-planes.js";

// promote --write of two files when the second cannot be written (a file-size limit, as a full
// disk): neither file changes. Written one after the other, the first was promoted and the error
// named only the second, a half promotion no report mentioned. The built CLI under `ulimit -f`,
// staging's versions read from its real control plane.

let planes: TwoPlanes;
let dir: string;
const override = (image: string) =>
  `environments:\n  prod:\n    spec:\n      source_revision_config: {image_uri: "${image}"}\n`;
// alpha.yaml is small; beta.yaml, past the limit with its comment, cannot be written whole.
const ALPHA = `${plain("alpha")}${override("img/alpha:0")}`;
const BETA = `# ${"notes ".repeat(3000)}\n${plain("beta")}${override("img/beta:0")}`;

beforeAll(async () => {
  assertBuilt();
  planes = await startTwoPlanes();
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-all-or-none-"));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: false}}\n"),
  );
  await writeFile(join(dir, "alpha.yaml"), ALPHA);
  await writeFile(join(dir, "beta.yaml"), BETA);
  const applied = await runCommand(applyCommand, [dir, "--env", "staging", "--yes"], planes);
  expect(applied.code, applied.err).toBe(0);
});

afterAll(async () => {
  await planes.staging.stop();
  await planes.prod.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("promote --write when one file cannot be written", () => {
  it("changes no file, and says nothing was written", async () => {
    const env = {
      STAGING_API_URL: planes.staging.url,
      STAGING_API_KEY: STAGING_KEY,
      PROD_API_URL: planes.prod.url,
      PROD_API_KEY: PROD_KEY,
    };
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
