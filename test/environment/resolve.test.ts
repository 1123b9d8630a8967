import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { formatRender } from "../../src/environment/format-render.js";
import { mergeSpecs } from "../../src/environment/merge-spec.js";
import { resolveTree } from "../../src/environment/resolve-tree.js";
import { selectEnvironments } from "../../src/environment/select.js";
import { checkFiles, yaml } from "../manifest/helpers.js";

const ENVIRONMENT = (name: string, extra = "") => yaml`
apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: http://127.0.0.1:8123
  api_key: {env: KEY}
${extra}`;

const STAGING = ENVIRONMENT(
  "staging",
  `  name_suffix: -staging
  defaults:
    labels: {tier: staging, team: platform}
    spec:
      source_config: {build_on_push: false}
      secrets:
        - name: LOG_LEVEL
          value: debug
`,
);

const DEPLOYMENT = yaml`
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
  labels: {team: support}
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: dev
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
  secrets:
    - name: OPENAI_API_KEY
      valueFrom: {env: OPENAI_API_KEY}
    - name: LOG_LEVEL
      value: info
environments:
  prod:
    spec:
      source_config: {deployment_type: prod}
      source_revision_config: {repo_ref: v1.4.2}
      secrets:
        - name: OPENAI_API_KEY
          valueFrom: {env: PROD_OPENAI_API_KEY}
`;

const tree = (extra: Record<string, string> = {}) =>
  checkFiles({
    "env/staging.yaml": STAGING,
    "env/prod.yaml": ENVIRONMENT("prod"),
    "support-agent.yaml": DEPLOYMENT,
    ...extra,
  });

describe("resolving one environment", () => {
  it("merges the override over the spec (JSON Merge Patch), secrets by name", () => {
    const { manifests, problems } = resolveTree(tree(), "prod");
    expect(problems).toEqual([]);
    const [prod] = manifests;
    expect(prod?.manifest).toEqual({
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "support-agent", labels: { team: "support" } },
      spec: {
        source: "gitrepo",
        source_config: {
          integration_id: "20000000-0000-4000-8000-000000000001",
          repo_url: "https://github.com/acme/support-agent",
          deployment_type: "prod",
        },
        source_revision_config: { repo_ref: "v1.4.2", graph_config_path: "langgraph.json" },
        secrets: [
          { name: "OPENAI_API_KEY", valueFrom: { env: "PROD_OPENAI_API_KEY" } },
          { name: "LOG_LEVEL", value: "info" },
        ],
      },
    });
    // Each value points at the line that wrote it: the override, or the base.
    expect(prod?.locate(["spec", "source_revision_config", "repo_ref"]).line).toBe(22);
    expect(prod?.locate(["spec", "source_revision_config", "graph_config_path"]).line).toBe(12);
    expect(prod?.locate(["spec", "secrets", 0, "valueFrom"]).line).toBe(25);
    expect(prod?.locate(["spec", "secrets", 1, "value"]).line).toBe(17);
  });

  it("puts the environment's defaults under the spec, adds its labels and name suffix", () => {
    const { manifests } = resolveTree(tree(), "staging");
    const [staging] = manifests;
    expect(staging?.manifest.metadata).toEqual({
      name: "support-agent-staging",
      labels: { tier: "staging", team: "support" },
    });
    const spec = (staging?.manifest as { spec: Record<string, unknown> }).spec;
    expect(spec.source_config).toMatchObject({ deployment_type: "dev", build_on_push: false });
    // The deployment's LOG_LEVEL replaces the default in place.
    expect(spec.secrets).toEqual([
      { name: "LOG_LEVEL", value: "info" },
      { name: "OPENAI_API_KEY", valueFrom: { env: "OPENAI_API_KEY" } },
    ]);
    const fromDefault = staging!.locate(["spec", "source_config", "build_on_push"]);
    expect(fromDefault).toEqual({ file: "env/staging.yaml", line: 12, column: 23 });
    expect(staging!.locate(["metadata", "labels", "tier"]).file).toBe("env/staging.yaml");
    expect(staging!.locate(["metadata", "labels", "team"]).file).toBe("support-agent.yaml");
  });

  it("an invalid merged value is an error at the line that wrote it, naming the environment", () => {
    const bad = DEPLOYMENT.replace("deployment_type: prod}", "deployment_type: production}");
    const { manifests, problems } = resolveTree(tree({ "support-agent.yaml": bad }), "prod");
    expect(manifests).toEqual([]);
    expect(problems.map((p) => `${p.file}:${p.line} ${p.code}`)).toEqual([
      "support-agent.yaml:21 invalid-value",
    ]);
    expect(problems[0]!.message).toContain("(environment prod)");
    // The same deployment resolves in staging, where that override does not apply.
    expect(resolveTree(tree({ "support-agent.yaml": bad }), "staging").problems).toEqual([]);
  });

  it("an error from an environment's default points into the Environment's file", () => {
    const broken = STAGING.replace("build_on_push: false", "build_on_push: sometimes");
    const { problems } = resolveTree(tree({ "env/staging.yaml": broken }), "staging");
    expect(problems.map((p) => `${p.file}:${p.line} ${p.code}`)).toEqual([
      "env/staging.yaml:12 invalid-type",
    ]);
  });

  it("metadata.environments limits where a deployment runs; null in an override removes a field", () => {
    const only = DEPLOYMENT.replace("  labels: {team: support}\n", "  environments: [prod]\n").replace(
      "      source_config: {deployment_type: prod}\n",
      "      source_config: {deployment_type: prod}\n      secret_references: null\n",
    );
    expect(resolveTree(tree({ "support-agent.yaml": only }), "staging").manifests).toEqual([]);
    const [prod] = resolveTree(tree({ "support-agent.yaml": only }), "prod").manifests;
    expect(prod?.manifest.metadata).toEqual({ name: "support-agent" });
  });

  it("--target matches the name as written or as resolved; an unknown one is a usage error", () => {
    expect(resolveTree(tree(), "staging", ["support-agent"]).selected).toHaveLength(1);
    expect(resolveTree(tree(), "staging", ["support-agent-staging"]).selected).toHaveLength(1);
    expect(() => resolveTree(tree(), "staging", ["nope"])).toThrow(/--target nope/);
    expect(() => resolveTree(tree(), "qa")).toThrow(/unknown environment "qa"; defined: prod, staging/);
  });

  it("an unknown --target or environment suggests the closest name and is printed escaped", () => {
    expect(() => resolveTree(tree(), "staging", ["suport-agent"])).toThrow(
      '--target suport-agent: no such object under PATH (did you mean "support-agent"?); check the name',
    );
    expect(() => resolveTree(tree(), "staging", ["support-agent-stagin"])).toThrow(
      '(did you mean "support-agent-staging"?)',
    );
    expect(() => resolveTree(tree(), "staging", ["a\u001b[2Jb"])).toThrow("--target a\\u001b[2Jb: no such");
    expect(() => resolveTree(tree(), "prdo")).toThrow('defined: prod, staging (did you mean "prod"?)');
  });
});

describe("merging and selecting", () => {
  it("keeps its inputs unchanged", () => {
    const base = { source_config: { a: 1 }, secrets: [{ name: "A", value: "1" }] };
    const copy = structuredClone(base);
    mergeSpecs([{}, base, { source_config: { a: null, b: 2 }, secrets: [{ name: "A", value: "2" }] }]);
    expect(base).toEqual(copy);
  });

  it("--env picks environments in order; none given means all", () => {
    const { environments } = tree();
    expect(selectEnvironments(environments, []).map((e) => e.manifest.metadata.name)).toEqual([
      "prod",
      "staging",
    ]);
    expect(selectEnvironments(environments, ["staging"]).map((e) => e.manifest.metadata.name)).toEqual([
      "staging",
    ]);
    expect(() => selectEnvironments(environments, ["qa"])).toThrow(/unknown environment "qa"/);
    expect(() => selectEnvironments(undefined, ["qa"])).toThrow(/no kind: Environment document/);
  });

  it("render prints plain Deployment YAML that reads back as the resolved manifest", () => {
    const resolved = resolveTree(tree(), "staging");
    const text = formatRender([{ environment: "staging", manifests: resolved.manifests }]);
    expect(text.startsWith("# environment staging, from support-agent.yaml:2\n")).toBe(true);
    expect(text).not.toContain("environments");
    // As resolved, but a secret's literal value printed as (sensitive) (format-render.ts).
    const manifest = resolved.manifests[0]!.manifest as { spec: { secrets: Array<Record<string, unknown>> } };
    const literal = manifest.spec.secrets.filter((secret) => "value" in secret);
    expect(literal.length).toBeGreaterThan(0);
    const secrets = manifest.spec.secrets.map((s) => ("value" in s ? { ...s, value: "(sensitive)" } : s));
    expect(parse(text)).toEqual({ ...manifest, spec: { ...manifest.spec, secrets } });
    for (const { value } of literal) expect(text).not.toContain(`value: ${String(value)}`);
  });
});
