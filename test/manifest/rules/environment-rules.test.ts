import { describe, expect, it } from "vitest";
import { ENVIRONMENT_SPEC_KEYS } from "../../../src/schema/environment.js";
import { DeploymentSpec } from "../../../src/schema/manifest.js";
import { brief, check, checkFiles, yaml } from "../helpers.js";

const STAGING = yaml`
apiVersion: plumb/v1
kind: Environment
metadata:
  name: staging
spec:
  api_url: {env: STAGING_API_URL}
  api_key: {file: keys/staging.key}
  tenant_id: 10000000-0000-4000-8000-000000000001
  mode: saas
  platform_url: https://platform.example
  name_suffix: -staging
  defaults:
    labels: {tier: staging}
    spec:
      source_config: {build_on_push: false}
  promotion:
    from: dev
    gates: {deployed: true, soak: 30m, checks: {min_pass_ratio: 0.9, max_latency_p95_ms: 2000}}
    auto: false
`;

const DEV = yaml`
apiVersion: plumb/v1
kind: Environment
metadata:
  name: dev
spec:
  api_url: http://127.0.0.1:8123
  api_key: {env: DEV_API_KEY}
`;

const DEPLOYMENT = yaml`
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: support-agent
  environments: [dev, staging]
spec:
  source: gitrepo
  source_config:
    integration_id: 20000000-0000-4000-8000-000000000001
    repo_url: https://github.com/acme/support-agent
    deployment_type: prod
  source_revision_config: {repo_ref: main, graph_config_path: langgraph.json}
environments:
  staging:
    spec:
      source_revision_config: {repo_ref: v1.2.0}
`;

describe("kind: Environment", () => {
  it("a complete environment is valid and returned apart from the managed objects", () => {
    const { problems, manifests, environments } = checkFiles({ "dev.yaml": DEV, "staging.yaml": STAGING });
    expect(problems).toEqual([]);
    expect(manifests).toEqual([]);
    expect(environments?.map((e) => e.manifest.metadata.name)).toEqual(["dev", "staging"]);
    expect(environments?.[1]?.locate(["spec", "name_suffix"])).toEqual({
      file: "staging.yaml",
      line: 11,
      column: 3,
    });
  });

  it("a literal API key is an error at its value, with the fix", () => {
    const { problems } = check(DEV.replace("{env: DEV_API_KEY}", "sk-live-123"));
    expect(brief(problems)).toEqual(["7:12 error literal-api-key"]);
    expect(problems[0]!.message).toContain("{env: VAR} or {file: PATH}");
    expect(problems[0]!.message).not.toContain("sk-live-123");
  });

  it("a URL carrying credentials (user:password@) is an error at it, the credentials never shown", () => {
    // Kept in git and printed by plan (the Deployment's repo_url as "+ source_config.repo_url: ...").
    const { problems } = check(
      DEV.replace("http://127.0.0.1:8123", "https://ci:pw-123@api.example").replace(
        "  api_key: {env: DEV_API_KEY}\n",
        "  api_key: {env: DEV_API_KEY}\n  platform_url: https://:tok-456@platform.example\n",
      ),
    );
    expect(brief(problems)).toEqual(["6:12 error url-credentials", "8:17 error url-credentials"]);
    expect(problems[0]!.message).toContain("spec.api_url carries credentials");
    const deployment = checkFiles({
      "dev.yaml": DEV,
      "staging.yaml": STAGING,
      "d.yaml": DEPLOYMENT.replace("https://github.com", "https://x:ghp_tok789@github.com"),
    });
    expect(brief(deployment.problems)).toEqual(["10:15 error url-credentials"]);
    expect(deployment.problems[0]!.message).toContain("source_config.repo_url carries credentials");
    for (const problem of [...problems, ...deployment.problems])
      expect(problem.message).not.toMatch(/pw-123|tok-456|ghp_tok789/);
    // Without credentials: no problem.
    expect(check(DEV).problems).toEqual([]);
  });

  it("a URL carrying a token elsewhere (query, path, a known shape) is an error too, the token never shown", () => {
    const token = "tok0123456789abcdefXYZ";
    const forms: Array<[string, string]> = [
      [`https://github.com/acme/agent.git?access_token=${token}`, "query parameter access_token"],
      [`https://github.com/x-access-token/${token}/acme/agent.git`, "path segment after x-access-token"],
      [`https://github.com/acme/agent.git#ghp_${token}`, "a ghp_ token"],
    ];
    for (const [url, what] of forms) {
      const { problems } = checkFiles({
        "dev.yaml": DEV,
        "staging.yaml": STAGING,
        "d.yaml": DEPLOYMENT.replace("https://github.com/acme/support-agent", url),
      });
      expect(brief(problems), url).toEqual(["10:15 error url-credentials"]);
      expect(problems[0]!.message).toContain(`carries credentials (${what})`);
      expect(problems[0]!.message).not.toContain(token);
    }
    const env = check(DEV.replace("http://127.0.0.1:8123", `https://api.example/?api_key=${token}`));
    expect(brief(env.problems)).toEqual(["6:12 error url-credentials"]);
    // A query that names no credential, an empty token parameter, a path without a marker: fine.
    for (const url of [
      "https://github.com/acme/agent?ref=main",
      "https://github.com/acme/agent?token=",
      "https://github.com/token-tools/agent",
      "https://github.com/token/agent",
      "https://agent.example/runs/v1@latest",
    ]) {
      const clean = checkFiles({
        "dev.yaml": DEV,
        "staging.yaml": STAGING,
        "d.yaml": DEPLOYMENT.replace("https://github.com/acme/support-agent", url),
      });
      expect(clean.problems, url).toEqual([]);
    }
  });

  it("a setting read from one of plumb's own credentials other than an API key is an error at it", () => {
    // A merged Environment sending the controller's git token to a server of its author's choosing.
    const leaking = DEV.replace("http://127.0.0.1:8123", "{env: PLUMB_WEBHOOK_SECRET}").replace(
      "DEV_API_KEY",
      "PLUMB_GIT_TOKEN",
    );
    const { problems } = check(leaking);
    expect(brief(problems)).toEqual([
      "6:18 error environment-credential",
      "7:18 error environment-credential",
    ]);
    expect(problems[1]!.message).toContain(
      "spec.api_key reads PLUMB_GIT_TOKEN, one of plumb's own credentials",
    );
    // The API key variable plumb itself reads stays an Environment's to name.
    expect(check(DEV.replace("DEV_API_KEY", "PLUMB_API_KEY")).problems).toEqual([]);
  });

  it("unknown fields, modes and missing settings are schema errors with file:line", () => {
    const bad = DEV.replace("  api_url: http://127.0.0.1:8123\n", "  mode: cloud\n  api_urll: x\n");
    expect(brief(check(bad).problems)).toEqual([
      "5:1 error missing-field",
      "6:9 error invalid-value",
      "7:3 error unknown-field",
    ]);
  });

  it("promotion.from must name a defined environment", () => {
    const { problems } = check(STAGING);
    expect(brief(problems)).toEqual(["17:11 error unknown-environment"]);
    expect(problems[0]!.message).toContain('unknown environment "dev"');
  });

  it("two environments of one name are an error", () => {
    const { problems } = checkFiles({ "a.yaml": DEV, "b.yaml": DEV });
    expect(problems.map((p) => `${p.file}:${p.line} ${p.code}`)).toEqual(["b.yaml:4 duplicate-name"]);
  });

  it("override keys are exactly the Deployment spec's keys", () => {
    expect([...ENVIRONMENT_SPEC_KEYS].sort()).toEqual(Object.keys(DeploymentSpec.properties).sort());
  });
});

describe("a Deployment's environments", () => {
  it("metadata.environments and the environments map naming defined environments are valid", () => {
    const { problems, manifests } = checkFiles({
      "dev.yaml": DEV,
      "staging.yaml": STAGING,
      "d.yaml": DEPLOYMENT,
    });
    expect(problems.filter((p) => p.file === "d.yaml")).toEqual([]);
    expect(manifests).toHaveLength(1);
  });

  it("an unknown environment name in either place is an error at the name", () => {
    const text = DEPLOYMENT.replace("[dev, staging]", "[dev, prod]").replace("  staging:\n", "  stagin:\n");
    const { problems, manifests } = checkFiles({ "dev.yaml": DEV, "d.yaml": text });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.code}`)).toEqual([
      "d.yaml:5:23 unknown-environment",
      "d.yaml:14:3 unknown-environment",
    ]);
    expect(manifests).toEqual([]);
  });

  it("without any Environment document, naming one is an error (and nothing else changes)", () => {
    const { problems } = check(DEPLOYMENT);
    expect(problems.map((p) => p.code)).toEqual([
      "unknown-environment",
      "unknown-environment",
      "unknown-environment",
    ]);
    expect(problems[0]!.message).toContain("no Environment document defines any");
    expect(
      check(DEPLOYMENT.replace(/environments[\s\S]*$/, "").replace("  environments: [dev, staging]\n", ""))
        .environments,
    ).toBeUndefined();
  });

  it("an override with an unknown spec key is an error at the key", () => {
    const text = DEPLOYMENT.replace("source_revision_config: {repo_ref: v1.2.0}", "sourc_config: {}");
    const { problems } = checkFiles({ "dev.yaml": DEV, "staging.yaml": STAGING, "d.yaml": text });
    const mine = problems.filter((p) => p.file === "d.yaml");
    expect(mine.map((p) => `${p.line}:${p.column} ${p.code} ${p.field}`)).toEqual([
      "16:7 unknown-field environments.staging.spec.sourc_config",
    ]);
  });
});
