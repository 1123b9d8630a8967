import { describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../src/diff/plan/plan-types.js";
import { escapeLines } from "../../src/manifest/format/format.js";
import { formatYamlDiff } from "../../src/report/format-yaml-diff.js";
import type { Deployment } from "../../src/schema/deployment.js";

// plumb diff prints live and the file as YAML, so a live value of several lines is a block scalar
// whose lines are lines of the output. A CI runner trims each line and runs one starting with `::`
// as a workflow command (`::add-mask::`, `::warning::`): such a line is printed with its first
// colon escaped, and control characters as escapes.

// eslint-disable-next-line no-control-regex -- what must not reach a terminal or a CI log
const UNSAFE = /^\s*::|[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/m;

const live = {
  id: "d-1",
  name: "agent",
  source: "external_container",
  source_config: {
    custom_url: "https://agent.example",
    resource_spec: { annotations: { note: "first\n::add-mask::ghp_secret\n  ::warning::injected" } },
  },
  source_revision_config: { image_uri: "img/agent:1" },
  secrets: [],
} as unknown as Deployment;

const change = {
  kind: "Deployment",
  name: "agent",
  file: "agent.yaml",
  line: 1,
  action: "update",
  id: "d-1",
  new_revision: true,
  revision_fields: ["source_revision_config.image_uri"],
  in_place_fields: [],
  request: null,
  diff: [],
  errors: [],
  warnings: [],
  changed_secrets: [],
  fields: [
    { field: "source_revision_config.image_uri", class: "revision", old: "img/agent:1", new: "img/agent:2" },
  ],
} as unknown as PlannedChange;

const plan = { format_version: "1", summary: {}, changes: [change] } as unknown as Plan;

describe("plumb diff's lines", () => {
  it("never start a workflow command nor carry a control character, with or without colour", () => {
    for (const color of [false, true]) {
      const text = formatYamlDiff(plan, { deployments: [live] }, { color });
      expect(text).toContain("+    image_uri: img/agent:2");
      // The live value's lines are there, written so a runner runs none of them.
      expect(text).toContain("\\u003a:add-mask::ghp_secret");
      expect(text).toContain("  \\u003a:warning::injected");
      // eslint-disable-next-line no-control-regex -- the colours picocolors adds
      const plainText = color ? text.replace(/\u001b\[\d+m/g, "") : text;
      expect(plainText).not.toMatch(UNSAFE);
    }
  });

  it("escapeLines leaves other lines as they are", () => {
    expect(escapeLines(" a: b\n+::x\n-  ::y\n@@ -1 +1 @@")).toBe(" a: b\n+::x\n-  ::y\n@@ -1 +1 @@");
    expect(escapeLines("  ::a::b\n::c\n\u00a0::d\n a::e")).toBe(
      "  \\u003a:a::b\n\\u003a:c\n\u00a0\\u003a:d\n a::e",
    );
  });
});
