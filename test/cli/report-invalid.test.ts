import { describe, expect, it } from "vitest";
import { processIo } from "../../src/cli/process-io.js";
import { reportInvalidManifests } from "../../src/report/report-invalid.js";
import type { Problem } from "../../src/manifest/types.js";

const problems: Problem[] = [
  {
    severity: "error",
    code: "bad-source",
    field: "spec.source",
    message: "must be one of …",
    file: "a.yaml",
    line: 3,
    column: 5,
  },
  {
    severity: "warning",
    code: "unknown-field",
    field: "spec.x",
    message: "unknown field",
    file: "b.yaml",
    line: 1,
    column: 1,
  },
];

const capture = () => {
  let text = "";
  return { write: (t: string) => (text += t), text: () => text };
};

describe("reportInvalidManifests (plan, drift and apply on invalid manifests)", () => {
  it("prints the validate lines and a count naming what was skipped", () => {
    const out = capture();
    reportInvalidManifests(out, problems, "text", "drift not checked");
    expect(out.text()).toContain("a.yaml:3:5: error: must be one of … [bad-source]");
    expect(out.text().trimEnd().split("\n").at(-1)).toBe("1 error, 1 warning: drift not checked");
  });

  it("prints a Markdown table for a pull-request comment with --output markdown", () => {
    const out = capture();
    const piped = [...problems, { ...problems[1]!, line: 9, message: "a | b" }];
    reportInvalidManifests(out, piped, "markdown", "nothing planned");
    const text = out.text();
    expect(text.startsWith("### plumb: invalid manifests\n")).toBe(true);
    expect(text).toContain("| `a.yaml:3:5` | error | `bad-source` | spec.source: must be one of … |");
    expect(text).toContain("| `b.yaml:9:1` | warning | `unknown-field` | spec.x: a \\| b |");
    expect(text.trimEnd().split("\n").at(-1)).toBe("**1 error, 2 warnings: nothing planned**");
    expect(text).not.toMatch(/^a\.yaml:3:5: error/m); // not the plain-text lines
  });

  it("prints the problems as JSON with --output json", () => {
    const out = capture();
    reportInvalidManifests(out, problems, "json", "nothing planned");
    const json = JSON.parse(out.text());
    expect(JSON.stringify(json)).toContain("a.yaml");
    expect(out.text()).not.toContain("nothing planned");
  });
});

describe("processIo", () => {
  it("is this process's streams and environment", () => {
    expect(processIo()).toMatchObject({ stdout: process.stdout, stderr: process.stderr, env: process.env });
  });
});
