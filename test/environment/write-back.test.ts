import { describe, expect, it } from "vitest";
import { writeBackTarget } from "../../src/environment/write-back.js";
import type { DeploymentManifest } from "../../src/schema/manifest.js";

// Where drift --write puts a live value of one environment: never where another environment
// would resolve it from.

const deployment = (over: Record<string, unknown> = {}) =>
  ({
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "a" },
    spec: { source: "internal_container", source_revision_config: { image_uri: "img:1" } },
    ...over,
  }) as unknown as DeploymentManifest;
const FIELD = ["source_revision_config", "image_uri"];
const ALL = ["staging", "prod"];
const where = (d: DeploymentManifest, env = "staging", defined = ALL) =>
  writeBackTarget(d, env, defined, FIELD).path.join(".");

describe("writeBackTarget", () => {
  it("an override that sets the field is edited", () => {
    const d = deployment({
      environments: { staging: { spec: { source_revision_config: { image_uri: "x" } } } },
    });
    expect(where(d)).toBe("environments.staging.spec.source_revision_config.image_uri");
  });

  it("a base value another environment resolves goes into this environment's override", () => {
    expect(where(deployment())).toBe("environments.staging.spec.source_revision_config.image_uri");
  });

  it("a base value every other environment overrides is edited in the base", () => {
    const d = deployment({
      environments: { prod: { spec: { source_revision_config: { image_uri: "p" } } } },
    });
    expect(where(d)).toBe("spec.source_revision_config.image_uri");
    // Runs only in staging: no other environment resolves it.
    const only = deployment({ metadata: { name: "a", environments: ["staging"] } });
    expect(where(only)).toBe("spec.source_revision_config.image_uri");
  });

  it("a value from the Environment's defaults (absent from the base) goes into the override", () => {
    const d = deployment({
      spec: { source: "internal_container" },
      metadata: { name: "a", environments: ["staging"] },
    });
    expect(where(d)).toBe("environments.staging.spec.source_revision_config.image_uri");
  });
});

describe("writeBackTarget, a key named like Object's own", () => {
  it("an annotation `constructor` is provided only where it is written", () => {
    // Base sets it, staging overrides it, prod's override has other annotations only: prod's live
    // value goes into the base, which only prod resolves it from. `"constructor" in {}` is true, so
    // prod's override was taken to set it.
    const field = ["source_config", "resource_spec", "annotations", "constructor"];
    const annotations = (value: Record<string, string>) => ({
      spec: { source_config: { resource_spec: { annotations: value } } },
    });
    const d = deployment({
      spec: { source: "external_container", ...annotations({ constructor: "base" }).spec },
      environments: { staging: annotations({ constructor: "s" }), prod: annotations({ team: "x" }) },
    });
    expect(writeBackTarget(d, "prod", ALL, field)).toEqual({ path: ["spec", ...field], layer: "base" });
  });
});
