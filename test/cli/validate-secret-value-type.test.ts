import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateCommand } from "../../src/cli/offline/validate.js";
import { check } from "../manifest/helpers.js";

// A secret's literal value of the wrong type is refused without printing it. A PIN written
// unquoted (`value: 98765432`) is read as a number, and the error said "must be a string, not the
// number 98765432", in the text, JSON, GitHub and SARIF outputs that CI logs and code scanning
// keep; in an environment's override too, where render and plan print "(sensitive)".

const SECRET_PIN = 98765432;
const PROD_PIN = 12345678;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-secret-type-"));
  await writeFile(
    join(dir, "envs.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: prod\nspec:\n  api_url: http://127.0.0.1:8123\n  api_key: {env: KEY}\n",
  );
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/agent:1"}
environments:
  prod:
    spec:
      secrets:
        - {name: PIN, value: ${PROD_PIN}}
        - {name: FLAG, value: true}
`,
  );
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe("a secret's value that is not a string", () => {
  it("is an invalid-type error that does not show the value", () => {
    const { problems } = check(`apiVersion: plumb/v1
kind: Deployment
metadata: {name: a}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/a:1"}
  secrets:
    - {name: PIN, value: ${SECRET_PIN}}
`);
    const typeProblem = problems.find((p) => p.code === "invalid-type");
    expect(typeProblem?.message).toBe(
      "spec.secrets[0].value must be a string, not a number (its value not shown: it is a secret); quote it in the manifest",
    );
    expect(JSON.stringify(problems)).not.toContain(String(SECRET_PIN));
  });

  it("in an environment's override: not in validate's text, JSON, GitHub or SARIF output", async () => {
    for (const output of ["text", "json", "github", "sarif"]) {
      let out = "";
      process.exitCode = 0;
      await validateCommand({ write: (t: string) => (out += t) }).parseAsync([dir, "--output", output], {
        from: "user",
      });
      process.exitCode = 0;
      expect(out).toContain("not a number (its value not shown: it is a secret)");
      expect(out).toContain("not a boolean (its value not shown: it is a secret)");
      expect(out).not.toContain(String(PROD_PIN));
    }
  });
});
