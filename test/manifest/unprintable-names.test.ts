import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/load.js";
import { runInProcess } from "../support/in-process-cli.js";
import { useTempRoots } from "./helpers.js";

// A file or directory name with a control character (git stores any name a pull request adds) is
// not read and is reported under an escaped name. `plumb validate` printed it as it was: in the
// default text output a name "x\n::warning file=...::..." became a GitHub Actions workflow command
// of its own on the CI log, and "\u001b[2J" cleared a terminal. An error, so that prune, which a
// skipped file's objects would otherwise look removed to, stops.

const t = useTempRoots("plumb-unprintable-");
const deployment = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: "img/${name}:1"}\n`;
const HOSTILE = "x\n::warning file=README.md,line=1::injected\u001b[2J";

it("a YAML file or a directory named with a control character is not read, and reported escaped", async () => {
  await t.put("a.yaml", deployment("a"));
  await writeFile(join(t.root, `${HOSTILE}.yaml`), deployment("b"));
  await mkdir(join(t.root, HOSTILE));
  await writeFile(join(t.root, HOSTILE, "c.yaml"), deployment("c"));
  const { manifests, problems } = await loadManifests(t.root);
  expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
  const escaped = "x\\u000a::warning file=README.md,line=1::injected\\u001b[2J";
  expect(problems.map((p) => `${p.file} ${p.severity} ${p.code}`)).toEqual([
    `${escaped} error unprintable-name`,
    `${escaped}.yaml error unprintable-name`,
  ]);

  const { code, output } = await runInProcess(["validate", t.root], {});
  expect(code).toBe(1);
  expect(output).not.toMatch(/\n::warning/);
  expect(output).not.toContain("\u001b");
});
