import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/built-cli.js";

// plumb render prints a value holding line breaks (a literal secret such as a PEM key, a command)
// on one line, double-quoted with `\n`: printed as a block scalar, each of its lines started a line
// of the output, and one reading `::warning::…` or `::add-mask::…` (leading spaces are trimmed) was
// run by a CI runner as a workflow command. The output still reads back as the same values; a
// secret's literal value is printed as (sensitive), never as written. (The secret NOTE holds other
// text than the annotation: a secret's value written in another field is refused, secret-value-reused.)

let dir: string;
const PEM = "-----BEGIN KEY-----\nMIIB\n-----END KEY-----\n";
const INJECTED = "line\n::warning file=x::injected\n  ::add-mask::y";

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-render-lines-"));
  await mkdir(join(dir, "environments"));
  await writeFile(
    join(dir, "environments", "staging.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: staging\nspec:\n  api_url: {env: STAGING_API_URL}\n  api_key: {env: STAGING_API_KEY}\n",
  );
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
  annotations:
    runbook: ${JSON.stringify(INJECTED)}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/agent:1"}
  secrets:
    - name: TLS_KEY
      value: ${JSON.stringify(PEM)}
    - name: NOTE
      value: ${JSON.stringify(`${INJECTED}\nnote`)}
`,
  );
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("plumb render of values with line breaks", () => {
  it("prints each on one line, and reads back as the same values", async () => {
    const { code, output } = await runCli(["render", dir, "--env", "staging"], {});
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/^\s*::/m);
    const docs = parseAllDocuments(output);
    expect(Array.isArray(docs) && docs.length).toBe(1);
    const manifest = (docs as Array<{ toJS: () => unknown }>)[0]!.toJS() as {
      metadata: { annotations: Record<string, string> };
      spec: { secrets: Array<{ name: string; value: string }> };
    };
    expect(manifest.metadata.annotations.runbook).toBe(INJECTED);
    // A secret's literal value is never printed (as plan and diff): by name only.
    expect(manifest.spec.secrets).toEqual([
      { name: "TLS_KEY", value: "(sensitive)" },
      { name: "NOTE", value: "(sensitive)" },
    ]);
    expect(output).not.toContain("MIIB");
  });
});
