import { describe, expect, it } from "vitest";
import {
  type ResolvedEnvironment,
  resolvedNameCollision,
} from "../../src/manifest/rules/environment/environment-names.js";
import { checkFiles, yaml } from "./helpers.js";

// Environments on one control plane (the same api_url, api_key and tenant_id) share its names: a
// deployment's name there is its name plus the environment's name_suffix. Two that meet are one
// live deployment that each environment's apply would change: an error at the later name.

const env = (name: string, extra = "", url = "{env: SAAS_API_URL}") => yaml`
apiVersion: plumb/v1
kind: Environment
metadata:
  name: ${name}
spec:
  api_url: ${url}
  api_key: {env: KEY}
${extra}`;

const deployment = (name: string, environments?: string[]) => yaml`
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: ${name}
${environments ? `  environments: [${environments.join(", ")}]\n` : ""}spec:
  source: internal_container
  source_revision_config: {image_uri: "img:1"}
`;

const where = (files: Record<string, string>) =>
  checkFiles(files)
    .problems.filter((p) => p.code === "environment-name-collision")
    .map((p) => `${p.file}:${p.line}:${p.column} ${p.message}`);

describe("names on a control plane shared by environments", () => {
  it("a suffix per environment, or another control plane, keeps names apart", () => {
    expect(
      where({
        "e/staging.yaml": env("staging", "  name_suffix: -staging\n"),
        "e/prod.yaml": env("prod"),
        "e/onprem.yaml": env("onprem", "", "{env: ONPREM_API_URL}"),
        "a.yaml": deployment("agent"),
      }),
    ).toEqual([]);
  });

  it("two environments without suffixes on one control plane: each shared deployment is one live deployment", () => {
    expect(
      where({
        "e/staging.yaml": env("staging"),
        "e/prod.yaml": env("prod"),
        "a.yaml": deployment("agent"),
        "b.yaml": deployment("only-prod", ["prod"]),
      }),
    ).toEqual([
      "a.yaml:4:9 deployment agent in environment staging is named agent on its control plane, as it is in environment prod (both environments have the same api_url, api_key and tenant_id): applying one would change the other's deployment; give the environments different name_suffix values, or rename one deployment",
    ]);
  });

  it("a prod deployment named as staging names another one (its name plus staging's suffix)", () => {
    expect(
      where({
        "e/staging.yaml": env("staging", "  name_suffix: -staging\n"),
        "e/prod.yaml": env("prod"),
        "a.yaml": deployment("triage"),
        "b.yaml": deployment("triage-staging", ["prod"]),
      }),
    ).toEqual([
      "b.yaml:4:9 deployment triage-staging in environment prod is named triage-staging on its control plane, as deployment triage is in environment staging (both environments have the same api_url, api_key and tenant_id): applying one would change the other's deployment; give the environments different name_suffix values, or rename one deployment",
    ]);
  });

  it("the later deployment is left out (as a duplicate name is), so no controller reconciles it", () => {
    const result = checkFiles({
      "e/staging.yaml": env("staging", "  name_suffix: -staging\n"),
      "e/prod.yaml": env("prod"),
      "a.yaml": deployment("triage"),
      "b.yaml": deployment("triage-staging", ["prod"]),
      "c.yaml": deployment("other"),
    });
    expect(result.manifests.map((m) => m.manifest.metadata.name).sort()).toEqual(["other", "triage"]);
  });

  it("another key on the same URL may reach another workspace: not said", () => {
    expect(
      where({
        "e/staging.yaml": env("staging").replace("{env: KEY}", "{env: STAGING_KEY}"),
        "e/prod.yaml": env("prod"),
        "a.yaml": deployment("agent"),
      }),
    ).toEqual([]);
  });

  it("another tenant on the same URL is another namespace", () => {
    expect(
      where({
        "e/staging.yaml": env("staging", "  tenant_id: 10000000-0000-4000-8000-000000000001\n"),
        "e/prod.yaml": env("prod", "  tenant_id: 10000000-0000-4000-8000-000000000002\n"),
        "a.yaml": deployment("agent"),
      }),
    ).toEqual([]);
  });

  it("one control plane's URL written two ways (case, a default port, a trailing slash) is one control plane", () => {
    for (const [a, b] of [
      ["https://api.example.com", "https://api.example.com/"],
      ["https://api.example.com", "HTTPS://API.Example.com:443"],
      ["https://api.example.com/v1", "https://api.example.com/v1//"],
    ])
      expect(
        where({
          "e/staging.yaml": env("staging", "", a),
          "e/prod.yaml": env("prod", "", b),
          "a.yaml": deployment("agent"),
        }),
        `${a} and ${b}`,
      ).toHaveLength(1);
    expect(
      where({
        "e/staging.yaml": env("staging", "", "https://api.example.com"),
        "e/prod.yaml": env("prod", "", "https://api.example.com:8443"),
        "a.yaml": deployment("agent"),
      }),
    ).toEqual([]);
  });
});

describe("resolvedNameCollision: environments compared as their settings resolve", () => {
  const at = (name: string, over: Partial<ResolvedEnvironment> = {}): ResolvedEnvironment => ({
    name,
    suffix: "",
    url: "https://api.example",
    key: "k",
    ...over,
  });
  const a: { name: string; environments: readonly string[] | undefined } = {
    name: "a",
    environments: undefined,
  };

  it("finds one name used by two environments that reach one control plane, however the URL is written", () => {
    expect(
      resolvedNameCollision([at("prod"), at("staging", { url: "https://API.example:443/" })], [a]),
    ).toEqual({
      live: "a",
      first: ["a", "prod"],
      second: ["a", "staging"],
    });
    expect(
      resolvedNameCollision(
        [at("prod"), at("staging", { suffix: "-s" })],
        [{ name: "a-s", environments: ["prod"] }, a],
      ),
    ).toMatchObject({ live: "a-s", first: ["a-s", "prod"], second: ["a", "staging"] });
  });

  it("finds none for another key, tenant or suffix, or deployments that run apart", () => {
    const none = (environments: ResolvedEnvironment[], deployments = [a]) =>
      resolvedNameCollision(environments, deployments);
    expect(none([at("prod"), at("staging", { key: "other" })])).toBeUndefined();
    expect(none([at("prod"), at("staging", { tenant: "t2" })])).toBeUndefined();
    expect(none([at("prod"), at("staging", { suffix: "-staging" })])).toBeUndefined();
    expect(
      none(
        [at("prod"), at("staging")],
        [
          { name: "a", environments: ["prod"] },
          { name: "b", environments: ["staging"] },
        ],
      ),
    ).toBeUndefined();
  });
});
