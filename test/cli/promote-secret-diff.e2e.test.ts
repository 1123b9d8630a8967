import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// plumb promote's diff never prints a secret's literal value. The diff's context lines are the
// manifest's own, and a prod override's `secrets: [{name, value}]` written just above the version
// promote edits was printed as it is, in the text report and in JSON's `diff`, where render, plan
// and diff print "(sensitive)": promote's output lands in CI logs. Staging's version is read from
// its real control plane; the file written with --write keeps the values.

let planes: TwoPlanes;
let dir: string;
const FILE = "agent.yaml";
const LITERALS = ["base-literal-1", "prod-literal-2", "pem-literal-3", "flow-literal-4"];
const MANIFEST = `${plain("agent")}  secrets:
    - {name: MODE, value: "${LITERALS[0]}"}
environments:
  prod:
    spec:
      secrets:
        - name: DB_PASSWORD
          value: &pw ${LITERALS[1]}
        - name: PEM
          value: |
            ${LITERALS[2]}
        - {name: TOKEN, value: ${LITERALS[3]}}
        - name: ALIAS
          value: *pw
        - {name: AGAIN, value: *pw}
      source_revision_config: {image_uri: "img/agent:0"}
`;

async function promote(...args: string[]) {
  const result = await runCommand(promoteCommand, [dir, "--to", "prod", ...args], planes);
  expect(result.code).toBe(0);
  return result.out;
}

beforeAll(async () => {
  planes = await startTwoPlanes();
  dir = await promotionRepo(planes, { [FILE]: MANIFEST }, { prefix: "plumb-promote-secret-diff-" });
});

afterAll(() => stopPromotion(planes, dir));

describe("promote's diff of a file holding literal secrets", () => {
  it("shows each secret's value as (sensitive), in text and JSON, and keeps it in the file", async () => {
    const text = await promote();
    expect(text).toContain('-      source_revision_config: {image_uri: "img/agent:0"}');
    expect(text).toContain("           value: (sensitive)");
    for (const literal of LITERALS) expect(text).not.toContain(literal);

    const json = JSON.parse(await promote("--output", "json")) as { diff: string };
    expect(json.diff).toContain('+      source_revision_config: {image_uri: "img/agent:1"}');
    expect(json.diff).toContain("value: (sensitive)");
    for (const literal of LITERALS) expect(json.diff).not.toContain(literal);

    // The line numbers are the file's: a masked block scalar keeps its lines.
    expect(text).toContain("@@ -20,4 +20,4 @@");

    await promote("--write");
    const written = await readFile(join(dir, FILE), "utf8");
    expect(written).toBe(MANIFEST.replace('"img/agent:0"', '"img/agent:1"'));
  });
});
