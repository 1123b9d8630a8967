import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInProcess } from "../support/in-process-cli.js";

// YAML merge keys (`<<: *base`) are YAML 1.1; plumb reads YAML 1.2 (core schema), where `<<` is a
// plain key. It was reported as an unknown field named "<<" (or a label whose value is a mapping),
// which says nothing of what its author meant. Now: refused at the `<<` key, saying merge keys are
// not supported and what to write instead (docs/manifests.md "Files and YAML").

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-merge-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HEAD = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: web
`;
const SOURCE = `spec:
  source: gitrepo
  source_config: &src
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/web
    deployment_type: prod
`;
const REVISION = `  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}\n`;
const REFUSED =
  'error: YAML merge keys ("<<") are not supported (YAML 1.2 has none): write the fields in this mapping; an alias can still stand for a whole value ("labels: *common") [yaml-merge-key]';

async function validate(text: string) {
  await writeFile(join(dir, "web.yaml"), text);
  const { code, output } = await runInProcess(["validate", dir], {});
  return { code, lines: output.trimEnd().split("\n") };
}

describe("plumb validate: a YAML merge key", () => {
  it("merging an anchored mapping: refused at the << key, not an unknown field", async () => {
    const text = `${HEAD}${SOURCE}  source_revision_config:\n    <<: *src\n    repo_ref: main\n    graph_config_path: langgraph.json\n`;
    expect(await validate(text)).toEqual({
      code: 1,
      lines: [`web.yaml:12:5: ${REFUSED}`, "0 valid manifests, 1 error, 0 warnings"],
    });
  });

  it.each([
    ["a mapping written in place, in labels", `  labels:\n    <<: {team: a}\n${SOURCE}${REVISION}`, "6:5"],
    [
      "a list of aliases, in a flow mapping",
      `  labels: &l {team: a}\n${SOURCE}  source_revision_config: {<<: [*src, *l], repo_ref: main}\n`,
      "12:28",
    ],
    [
      "at the document's top",
      `base: &b {apiVersion: plumb/v1}\n<<: *b\nkind: Deployment\nmetadata: {name: web}\n${SOURCE}${REVISION}`,
      "2:1",
    ],
  ])("%s: refused at the << key", async (_name, text, at) => {
    const full = text.startsWith("base") ? text : `${HEAD}${text}`;
    const { code, lines } = await validate(full);
    expect(code).toBe(1);
    expect(lines[0]).toBe(`web.yaml:${at}: ${REFUSED}`);
  });

  it("a quoted '<<' is a key like any other (an unknown field), and a whole-value alias is fine", async () => {
    const quoted = `${HEAD}  labels: &common {team: a}\n${SOURCE}${REVISION}  "<<": x\n`;
    expect((await validate(quoted)).lines[0]).toBe(
      'web.yaml:13:3: error: unknown field "<<" in spec [unknown-field]',
    );
    const alias = `${HEAD}  labels: &common {team: a}\n${SOURCE}  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}\n  verify: {assistant_id: agent, input: *common}\n`;
    expect(await validate(alias)).toEqual({ code: 0, lines: ["1 valid manifest, 0 errors, 0 warnings"] });
  });
});
