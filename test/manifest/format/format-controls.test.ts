import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runInProcess } from "../../support/in-process-cli.js";
import { useTempRoots } from "../helpers.js";

// A problem line is one line of printable text. A mapping key is quoted by no message that names
// its field path ("metadata.labels.k\n::warning::x contains the control character U+000A",
// 'unknown field "unk\n::warning::x"'): validate's default text output (and plan's, diff's and
// status's problems) printed it as written, so a key in a pull request's manifest became a GitHub
// Actions workflow command of its own on the CI log, and an escape sequence reached the terminal.

const t = useTempRoots("plumb-format-controls-");

it("validate's text output escapes control characters a manifest's keys put in a problem", async () => {
  await writeFile(
    join(t.root, "a.yaml"),
    [
      "apiVersion: plumb/v1",
      "kind: Deployment",
      "metadata:",
      "  name: a",
      '  labels: {"k\\n::warning::label\\u001b[2J": v}',
      "spec:",
      "  source: internal_container",
      '  source_revision_config: {image_uri: "img/a:1"}',
      '  "unk\\n::warning::key": 1',
      "",
    ].join("\n"),
  );
  const { code, output } = await runInProcess(["validate", t.root], {});
  expect(code).toBe(1);
  const lines = output.trimEnd().split("\n");
  expect(lines.filter((line) => !/^a\.yaml:\d+:\d+: error: /.test(line))).toEqual([
    "0 valid manifests, 2 errors, 0 warnings",
  ]);
  expect(output).toContain('unknown field "unk\\n::warning::key" in spec');
  expect(output).not.toContain("\u001b");
});
