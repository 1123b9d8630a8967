import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { setValues } from "../../src/environment/set-values.js";

const BASE = `# the support agent
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent # its name
spec:
  source: gitrepo
  source_revision_config:
    repo_ref: main
    graph_config_path: langgraph.json
  secrets:
  - name: LOG_LEVEL
    value: info
`;

const edit = (path: string, value: string, name = "support-agent") => ({
  kind: "Deployment",
  name,
  path: path.split("."),
  value,
});

describe("setValues", () => {
  it("adds a missing override in block style, keeping every other byte", () => {
    const { text, outcomes } = setValues(BASE, [
      edit("environments.prod.spec.source_revision_config.repo_ref", "refs/tags/v1.5.0"),
      edit("environments.prod.spec.source_revision_config.graph_config_path", "agent/langgraph.json"),
    ]);
    expect(outcomes.every((o) => o.written)).toBe(true);
    expect(text).toBe(
      `${BASE}environments:
  prod:
    spec:
      source_revision_config:
        repo_ref: refs/tags/v1.5.0
        graph_config_path: agent/langgraph.json
`,
    );
  });

  it("replaces an existing value and extends a flow mapping, comments and other documents kept", () => {
    const before = `${BASE}environments:
  prod:
    spec:
      source_config: {deployment_type: prod}
      source_revision_config: {repo_ref: v1.4.2}   # pinned by hand
  staging: {}
---
apiVersion: plumb/v1
kind: Deployment
metadata: {name: other}
spec: {source: gitrepo}
`;
    const { text, outcomes } = setValues(before, [
      edit("environments.prod.spec.source_revision_config.repo_ref", "refs/tags/v1.5.0"),
      edit("environments.prod.spec.source_revision_config.image_uri", "registry/agent:1.5"),
      edit("environments.staging.spec.source_revision_config.repo_ref", "0123456"),
      edit("environments.prod.spec.source_revision_config.repo_ref", "refs/tags/v2", "other"),
    ]);
    expect(outcomes.map((o) => o.written)).toEqual([true, true, true, true]);
    expect(text).toContain(
      "source_revision_config: {repo_ref: refs/tags/v1.5.0, image_uri: registry/agent:1.5}   # pinned by hand",
    );
    expect(text).toContain(`staging: { spec: {source_revision_config: {repo_ref: "0123456"}} }`);
    expect(text).toContain("# its name");
    const docs = text.split("---\n").map((d) => parse(d) as Record<string, unknown>);
    expect(docs[1]).toEqual({
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "other" },
      spec: { source: "gitrepo" },
      environments: { prod: { spec: { source_revision_config: { repo_ref: "refs/tags/v2" } } } },
    });
  });

  it("follows the file's own indentation", () => {
    const four = "kind: Deployment\nmetadata:\n    name: support-agent\nspec:\n    source: gitrepo\n";
    const { text } = setValues(four, [edit("environments.prod.spec.source_revision_config.repo_ref", "v")]);
    expect(text.slice(four.length)).toBe(
      "environments:\n    prod:\n        spec:\n            source_revision_config:\n                repo_ref: v\n",
    );
  });

  it("refuses what it cannot write in place and says why, leaving the text", () => {
    const before = `${BASE}environments:\n  prod:\n`;
    const { text, outcomes } = setValues(before, [
      edit("environments.prod.spec.source_revision_config.repo_ref", "v"),
      edit("spec.secrets", "x"),
      edit("spec.source", "x", "missing"),
    ]);
    expect(text).toBe(before);
    expect(outcomes.map((o) => o.reason)).toEqual([
      "environments.prod is not a mapping",
      "spec.secrets is not a single value; edit it by hand",
      "no Deployment missing in the file",
    ]);
  });

  it("keeps a CRLF file CRLF", () => {
    const crlf =
      "kind: Deployment\r\nmetadata:\r\n  name: support-agent\r\nenvironments:\r\n  prod:\r\n    spec:\r\n      source_config: {x: 1}\r\n";
    const { text, outcomes } = setValues(crlf, [
      edit("environments.prod.spec.source_revision_config.repo_ref", "v2"),
    ]);
    expect(outcomes[0]!.written).toBe(true);
    expect(text).toBe(`${crlf}      source_revision_config:\r\n        repo_ref: v2\r\n`);
  });
});
