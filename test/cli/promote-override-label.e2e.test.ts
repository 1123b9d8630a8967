import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { prodImage, promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// A problem in prod's override is not staging's. promote --to prod reported an unknown field in
// `environments.prod.spec` as "environment staging: agent.yaml:…": the problems of the files
// themselves came with the first environment resolved (the source). Now they are reported with
// no environment, and a problem of one environment's merged deployment names that environment.

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";

beforeAll(async () => {
  planes = await startTwoPlanes();
  dir = await promotionRepo(
    planes,
    { [FILE]: `${plain("agent")}${prodImage("img/agent:0")}` },
    {
      prefix: "plumb-promote-label-",
    },
  );
});

afterAll(() => stopPromotion(planes, dir));

const promote = () =>
  runCommand(promoteCommand, [dir, "--to", "prod"], planes).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  );

describe("promote with a problem in prod's override", () => {
  it("an unknown field there is not reported as staging's", async () => {
    await writeFile(join(dir, FILE), `${plain("agent")}${prodImage("img/agent:0")}      bogus: 1\n`);
    const error = await promote();
    expect(error?.code).toBe("invalid-manifests");
    expect(error?.message).toMatch(
      /^agent\.yaml:\d+:\d+: unknown field "bogus" in environments\.prod\.spec;/,
    );
    expect(error?.message).not.toContain("staging");
  });

  it("a value that is invalid only as prod resolves it names prod", async () => {
    await writeFile(
      join(dir, FILE),
      `${plain("agent")}environments:\n  prod:\n    spec:\n      source_revision_config: {image_uri: 5}\n`,
    );
    const error = await promote();
    expect(error?.code).toBe("invalid-manifests");
    expect(error?.message).toMatch(
      /^environment prod: agent\.yaml:\d+:\d+: spec\.source_revision_config\.image_uri/,
    );
  });
});
