import { describe, expect, it } from "vitest";
import { editValues } from "../../../src/manifest/write/edit-values.js";

// drift --write edits values in place: only the edited scalars change, every other byte stays.

const TEXT = `# Support agent: owned by the support team.
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support # never rename
spec:
  source: gitrepo
  source_config: { integration_id: 20000000-0000-4000-8000-000000000001, build_on_push: true }
  source_revision_config:
    repo_ref: 'main'      # the release branch
    graph_config_path: langgraph.json
---
# the other one
apiVersion: plumb/v1
kind: Deployment
metadata: {name: other}
spec:
  source_revision_config:
    image_uri: img/other:1
`;

describe("editValues", () => {
  it("changes only the edited scalars, keeping quoting style, comments and other documents", () => {
    const { text, outcomes } = editValues(TEXT, [
      {
        kind: "Deployment",
        name: "support",
        path: ["spec", "source_revision_config", "repo_ref"],
        value: "release",
      },
      { kind: "Deployment", name: "support", path: ["spec", "source_config", "build_on_push"], value: false },
      {
        kind: "Deployment",
        name: "other",
        path: ["spec", "source_revision_config", "image_uri"],
        value: "img/other:2",
      },
    ]);
    expect(outcomes.map((o) => [o.line, o.written])).toEqual([
      [10, true],
      [8, true],
      [19, true],
    ]);
    const expected = TEXT.replace("repo_ref: 'main'", "repo_ref: 'release'")
      .replace("build_on_push: true", "build_on_push: false")
      .replace("img/other:1", "img/other:2");
    expect(text).toBe(expected);
  });

  it("quotes a string that would read back as another type", () => {
    const { text } = editValues(TEXT, [
      {
        kind: "Deployment",
        name: "other",
        path: ["spec", "source_revision_config", "image_uri"],
        value: "1.5",
      },
    ]);
    expect(text).toContain('image_uri: "1.5"');
  });

  it("reports a path that is not a single value, and an unknown document, without writing", () => {
    const { text, outcomes } = editValues(TEXT, [
      { kind: "Deployment", name: "support", path: ["spec", "source_config"], value: "x" },
      { kind: "Deployment", name: "ghost", path: ["spec", "source"], value: "x" },
      { kind: "Deployment", name: "support", path: ["spec", "missing"], value: "x" },
    ]);
    expect(text).toBe(TEXT);
    expect(outcomes.map((o) => o.written)).toEqual([false, false, false]);
  });
});
